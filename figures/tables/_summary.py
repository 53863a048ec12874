"""The summary of a table run: per cell our mean, its standard error and z against the paper; grid-edge counts;
the Markdown in the paper's layout; the ``--plot`` figure.

For a cell (data set, model, metric) with our values ``v_1 .. v_n`` over ``n`` splits:

* ``se = std(v, ddof=1) / sqrt(n)``, the standard error of our mean;
* ``z = (mean - paper_mean) / se``: how many of *our* standard errors our mean lies from the paper's number
  (the paper's number taken as exact);
* ``z_two_sample = (mean - paper_mean) / sqrt(se^2 + paper_std^2 / paper_n)`` where the paper prints a std over
  its own ``paper_n`` splits (000 Table 2: 100 splits, 000 §4; 001 Tables 1-2: 10, 001 §3-4); 004 Table 1 prints
  no std, so there it is ``None``;
* ``flag`` / ``flag_two_sample``: ``"ok"`` for ``|z| <= 2``, ``">2 SE"`` for ``2 < |z| <= 3``, ``">3 SE"`` above;
  a cell whose values are all equal (``se = 0``) is ``"ok"`` when it equals the paper's number, else ``">3 SE"``
  with ``z = None``; a cell of one split has no SE and no flag;
* ``within_paper_std``: ``|mean - paper_mean| <= paper_std``, the older and far looser criterion, kept beside
  the flags (at 100 splits it accepts differences of up to 10 standard errors of the mean).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["summarize", "render_markdown", "se_flag", "edge_counts", "plot_cells"]

#: |z| thresholds of the flags
FLAG_LEVELS = (2.0, 3.0)


def _floats(rows, col):
    vals = [float(r[col]) for r in rows if r.get(col, "") != ""]
    return np.array(vals, dtype=float)


def se_flag(diff: float, se: float) -> tuple[float | None, str]:
    """``(z, flag)`` of a difference ``diff`` against its standard error ``se`` (see the module docstring)."""
    if not se > 0:
        return (0.0, "ok") if diff == 0 else (None, f">{FLAG_LEVELS[1]:g} SE")
    z = diff / se
    if abs(z) > FLAG_LEVELS[1]:
        return z, f">{FLAG_LEVELS[1]:g} SE"
    if abs(z) > FLAG_LEVELS[0]:
        return z, f">{FLAG_LEVELS[0]:g} SE"
    return z, "ok"


def _metric_cell(dataset, model, metric, v, paper, paper_n) -> dict:
    mean = float(v.mean())
    std = float(v.std(ddof=1)) if v.size > 1 else 0.0
    se = std / math.sqrt(v.size)
    pm, ps = paper.get(metric, (None, None))
    cell = {"dataset": dataset, "model": model, "metric": metric, "mean": mean, "std": std, "n": int(v.size),
            "se": se, "paper_mean": pm, "paper_std": ps, "paper_n": paper_n if ps is not None else None,
            "z": None, "flag": None, "z_two_sample": None, "flag_two_sample": None,
            "within_paper_std": None if (pm is None or ps is None) else bool(abs(mean - pm) <= ps)}
    if pm is not None and v.size > 1:  # one split has no standard error: no flag
        cell["z"], cell["flag"] = se_flag(mean - pm, se)
        if ps is not None and paper_n:
            cell["z_two_sample"], cell["flag_two_sample"] = se_flag(mean - pm, math.sqrt(se ** 2 + ps ** 2 / paper_n))
    return cell


def edge_counts(rows) -> dict[str, int]:
    """How many rows (splits) selected each ``hyperparameter:edge`` (the CSV column ``at_edge``, ``;``-separated)."""
    counts: dict[str, int] = {}
    for r in rows:
        for e in filter(None, (r.get("at_edge") or "").split(";")):
            counts[e] = counts.get(e, 0) + 1
    return dict(sorted(counts.items()))


def summarize(module, rows) -> list[dict]:
    """One cell per (dataset, model, metric): mean, std (ddof=1), SE, z and flags next to the paper's, and one
    ``"hyperparameters (median)"`` cell per (dataset, model) with the median selection, the fits that stopped at
    their iteration limit and the selections on a grid edge (``n_at_edge`` splits; ``at_edge`` per edge)."""
    paper_n = getattr(module, "PAPER_SPLITS", None)
    cells = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        for model in dict.fromkeys(r["model"] for r in rows if r["dataset"] == dataset):
            sel = [r for r in rows if r["dataset"] == dataset and r["model"] == model]
            paper = module.PAPER.get((dataset, model), {})
            for metric in module.METRICS:
                v = _floats(sel, metric)
                if v.size:
                    cells.append(_metric_cell(dataset, model, metric, v, paper, paper_n))
            params = {p: float(np.median(v)) for p in ("C", "sigma", "gamma", "epsilon") if (v := _floats(sel, p)).size}
            conv = _floats(sel, "converged")
            cells.append({"dataset": dataset, "model": model, "metric": "hyperparameters (median)", **params,
                          "n_not_converged": int(np.sum(conv == 0)), "n": len(sel),
                          "n_at_edge": sum(1 for r in sel if r.get("at_edge")), "at_edge": edge_counts(sel)})
    return cells


# ------------------------------------------------------------------------------------------------
# Markdown
# ------------------------------------------------------------------------------------------------
def _digits(metric, value) -> int:
    """Decimals: one, two below 1 (an error of 0.22 %), four for an MSE below 1."""
    if abs(value) >= 1:
        return 1
    return 4 if metric == "mse" else 2


def _num(x, metric, ref=None) -> str:
    return "—" if x is None else f"{x:.{_digits(metric, x if ref is None else ref)}f}"


def _z(z) -> str:
    return "—" if z is None else f"{z:+.1f}"


def _layout_cell(c) -> str:
    """One cell of the paper-layout table: ``ours ± SE · paper (± std) · flag [two-sample flag]``."""
    if c is None:
        return ""
    m = c["metric"]
    ours = f"{_num(c['mean'], m)} ± {_num(c['se'], m, c['mean'])}"
    if c["paper_mean"] is None:
        return f"{ours} · (not in the paper)"
    paper = _num(c["paper_mean"], m) + ("" if c["paper_std"] is None else f" ± {_num(c['paper_std'], m, c['paper_mean'])}")
    two = "" if c["flag_two_sample"] is None else f"; 2-sample {c['flag_two_sample']}"
    return f"{ours} · {paper} · {c['flag']}{two}"


def _layout(module, cells) -> list[tuple[str, str, tuple[str, ...]]]:
    """The paper's columns: ``module.LAYOUT`` (header, model, metrics: the first present is shown) or, by default,
    every (model, metric) of the run in order."""
    lay = getattr(module, "LAYOUT", None)
    if lay:
        return list(lay)
    seen = dict.fromkeys((c["model"], c["metric"]) for c in cells if "mean" in c)
    return [(f"{mo} {me}", mo, (me,)) for mo, me in seen]


def _paper_layout_table(module, cells) -> list[str]:
    by = {(c["dataset"], c["model"], c["metric"]): c for c in cells if "mean" in c}
    cols = [col for col in _layout(module, cells) if any(k[1] == col[1] and k[2] in col[2] for k in by)]
    labels = getattr(module, "ROW_LABELS", {})
    lines = ["| data set | " + " | ".join(h for h, _, _ in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for d in dict.fromkeys(c["dataset"] for c in cells):
        row = []
        for _, model, metrics in cols:
            cell = next((by[(d, model, m)] for m in metrics if (d, model, m) in by), None)
            row.append(_layout_cell(cell))
        lines.append(f"| {labels.get(d, d)} | " + " | ".join(row) + " |")
    return lines


def _detail_table(cells) -> list[str]:
    lines = ["| data set | model | metric | ours mean ± std (n) | SE | paper | z | flag | z 2-sample | flag 2-sample "
             "| within paper std |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        if "mean" not in c:
            continue
        m = c["metric"]
        within = "n/a" if c["within_paper_std"] is None else ("yes" if c["within_paper_std"] else "no")
        paper = _num(c["paper_mean"], m) + ("" if c["paper_std"] is None else
                                            f" ± {_num(c['paper_std'], m, c['paper_mean'])} ({c['paper_n']})")
        lines.append(f"| {c['dataset']} | {c['model']} | {m} | {_num(c['mean'], m)} ± {_num(c['std'], m, c['mean'])} "
                     f"({c['n']}) | {_num(c['se'], m, c['mean'])} | {paper} | {_z(c['z'])} | {c['flag'] or '—'} "
                     f"| {_z(c['z_two_sample'])} | {c['flag_two_sample'] or '—'} | {within} |")
    return lines


def _hyper_table(cells) -> tuple[list[str], int, int]:
    lines = ["| data set | model | median values | splits with a selection on a grid edge |", "|---|---|---|---|"]
    n_edge = n_all = 0
    for c in cells:
        if "mean" in c:
            continue
        ps = ", ".join(f"{k} = {c[k]:.4g}" for k in ("C", "sigma", "gamma", "epsilon") if k in c)
        nc = f" ({c['n_not_converged']} fits stopped at max_iter)" if c["n_not_converged"] else ""
        which = ", ".join(f"{e} {k}" for e, k in c["at_edge"].items())
        lines.append(f"| {c['dataset']} | {c['model']} | {ps}{nc} | {c['n_at_edge']}/{c['n']}"
                     f"{' (' + which + ')' if which else ''} |")
        n_edge, n_all = n_edge + c["n_at_edge"], n_all + c["n"]
    return lines, n_edge, n_all


def render_markdown(module, cells, *, splits, quick, seed, runtime_s, where) -> str:
    """The Markdown summary: the paper's layout (ours ± SE · paper · flags), the per-cell details, the
    hyperparameters with their grid-edge counts, the readings of the paper's ambiguities, the protocol."""
    flags = [c["flag"] for c in cells if c.get("flag")]
    lines = [f"# {module.NAME}: {module.TITLE}", "",
             f"{splits} split(s) per data set{' (--quick: small grid, few splits)' if quick else ''}, seed {seed}, "
             f"runtime {runtime_s:.1f} s ({where}).", "",
             "Each cell: ours mean ± SE (SE = std / sqrt(n), ddof 1) · the paper's number (± its std) · flag: "
             "'ok' when |z| ≤ 2, '>2 SE', '>3 SE', z = (ours − paper) / SE; '2-sample' uses "
             "sqrt(SE² + paper std² / paper n) where the paper prints a std.", "",
             *_paper_layout_table(module, cells), "",
             f"Flags (our SE): {flags.count('ok')} ok, {flags.count('>2 SE')} >2 SE, {flags.count('>3 SE')} >3 SE "
             f"of {len(flags)} cells with a paper number.", "", "## Every cell", "", *_detail_table(cells)]
    hyper, n_edge, n_all = _hyper_table(cells)
    lines += ["", "## Hyperparameters", "", f"Selections on a grid edge: {n_edge} of {n_all} rows.", "", *hyper]
    readings = getattr(module, "READINGS", {})
    if readings:
        lines += ["", "## Readings of the paper (both computed)", ""]
        lines += [f"- `{k}`: {v}" for k, v in readings.items()]
    notes = getattr(module, "NOTES", "")
    if notes:
        lines += ["", notes.strip()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------
# the figure
# ------------------------------------------------------------------------------------------------
def plot_cells(module, cells, path) -> None:
    """``NAME.png``: one panel per metric the paper prints, per (data set, model) our mean ± SE (thick) and ± 2 SE
    (thin) beside the paper's number (red cross, its std as a red line where printed). Agg, no pyplot state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    metric_cells = [c for c in cells if "mean" in c]
    metrics = list(dict.fromkeys(c["metric"] for c in metric_cells if c["paper_mean"] is not None))
    metrics = metrics or list(dict.fromkeys(c["metric"] for c in metric_cells))  # the paper prints none of them
    n_rows = max(len([c for c in metric_cells if c["metric"] == m]) for m in metrics) if metrics else 1
    fig = Figure(figsize=(5.0 * max(len(metrics), 1), 1.0 + 0.32 * n_rows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(len(metrics), 1), squeeze=False)[0]
    for ax, metric in zip(axes, metrics):
        sel = [c for c in metric_cells if c["metric"] == metric]
        ys = np.arange(len(sel))[::-1]
        for y, c in zip(ys, sel):
            ax.errorbar(c["mean"], y, xerr=2 * c["se"], fmt="none", ecolor="C0", elinewidth=0.8, capsize=2)
            ax.errorbar(c["mean"], y, xerr=c["se"], fmt="o", color="C0", elinewidth=2.5, ms=4)
            if c["paper_mean"] is not None:
                if c["paper_std"] is not None:
                    ax.plot([c["paper_mean"] - c["paper_std"], c["paper_mean"] + c["paper_std"]], [y - 0.25] * 2,
                            color="C3", lw=0.8, alpha=0.6)
                ax.plot(c["paper_mean"], y - 0.25, "x", color="C3", ms=6)
        ax.set_yticks(ys, [f"{c['dataset']} / {c['model']}" for c in sel], fontsize=7)
        vals = [c["mean"] for c in sel if c["mean"] > 0] + [c["paper_mean"] for c in sel if c["paper_mean"]]
        if vals and max(vals) / min(vals) > 100:
            ax.set_xscale("log")
        ax.set_title(metric, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"{module.NAME}: ours (blue: mean ± SE, ± 2 SE) vs the paper (red: mean, its std)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)

"""The verdict of :func:`svmref.verify.check`: one :class:`Record` per instance, gathered in a :class:`Report`.

The summary follows qpbenchmark: success rate, and shifted geometric means (``sgm``) of the
solve time and of the residuals over the instances,

    sgm(x; s) = exp(mean_k log(x_k + s)) - s,

with shift ``s`` = 1 ms for times and 1e-12 for (dimensionless) residuals, so that exact zeros do not
send the mean to 0. Non-finite values (a solver that raised) are left out of the means and counted.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["Record", "Report", "shifted_geometric_mean"]

TIME_SHIFT = 1e-3
#: Width of the formulation column of :meth:`Report.table` (the longest name, ``l2_svm_regularised_bias``).
FORMULATION_WIDTH = 23
RESIDUAL_SHIFT = 1e-12


def shifted_geometric_mean(values, shift: float) -> float:
    """``exp(mean(log(x + shift))) - shift`` over the finite values (``nan`` if none)."""
    x = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if x.size == 0:
        return float("nan")
    return float(np.exp(np.mean(np.log(np.maximum(x, 0.0) + shift))) - shift)


@dataclass
class Record:
    """The verdict on one (solver, formulation, instance).

    ``passed`` is True, False, or None when the reference does not apply (``verdict`` "not convex"),
    could not be computed (``verdict`` "no reference") or is not accurate enough to decide a comparison at
    ``tol`` (``verdict`` "unresolved": no check fails, but one is within the reference's resolution of
    ``tol``). ``verdict`` is "pass", "fail", "error" (the solver raised or returned something unusable),
    "not convex", "no reference" or "unresolved". A pass at ``tol`` means every reported error is at most
    ``tol`` in its unit (:data:`verify.TOLERANCES`). ``reason`` names every check that failed, worst offender first.
    ``objective_gap = |obj - obj*| / |obj*|``; ``kkt_violation`` the largest of the KKT
    residuals (box, equality, primal feasibility, complementarity, stationarity); ``duality_gap``,
    ``decision_gap``, ``b_gap`` (the given ``b``'s distance from the reference's KKT interval, in the solution's
    unit; ``nan`` when verify derived ``b``): see :data:`verify.TOLERANCES`. ``residuals`` holds each residual
    by name; ``reference_resolution`` how far the reference resolves each comparison
    (:func:`svmref.verify.reference.resolution`).
    ``verdict`` "timeout": no answer within ``check(..., timeout=)`` seconds (``passed`` False). ``verdict``
    "different problem" (``passed`` None): the answer is known, from how it was made, to solve another problem (a
    linear model with its intercept in the penalty, :mod:`svmref.verify.estimators`).

    For a failed instance: ``diagnoses`` in plain words, the cause first (the solver's own status or warning,
    "solves the problem with C = ... instead", "stopped early", or "verify does not know the cause"), then the facts
    ("b is wrong for the answer's own alpha ...", "box violated ...", "y'alpha != 0 ...", "not optimal (...)");
    ``hints`` ("hint: the answer passes after alpha -> y * alpha"); ``would_pass_at_tol`` the smallest
    one-digit ``tol < 1`` at which it would pass, confirmed by re-checking (None: none below 1, or an
    error/timeout). ``solver_tol``: the ``tol`` verify passed to the solver (None when it did not). ``b_interval``:
    the KKT interval ``[b_low, b_high]`` of the bias at the answer's alpha (the biases that minimise its natural
    residual, :func:`svmref.verify.kkt.natural_b_interval`). ``reference_certified``: whether the
    reference carried a passing optimality certificate (None: it carries none).

    ``bias_free_gap``: the largest difference of ``W.Phi(x)`` alone from the reference's, reported and never judged
    (``decision_gap`` judges ``f = W.Phi(x) + b``). ``solver_status``, ``solver_message``: the ``status`` and
    ``message`` of the solver's answer where it has them; ``solver_warnings``: ``[category, message, count]`` of the
    warnings it issued (at most :data:`svmref.verify.worker.WARNINGS_KEEP` distinct ones), ``solver_warnings_total``
    how many it issued in all. ``solver_tol_parameter``: the name of the solver's parameter that received ``tol``
    (``tol``, ``tolerance``, ``toler``, ``eps`` or the one named by ``--solver-tol``).

    ``solver_output``: what the solver printed on this instance (standard output and error together, captured
    in its worker process; at most :data:`svmref.verify.worker.OUTPUT_KEEP_LINES` lines, the middle left out
    and said so), ``solver_output_lines`` how many lines it printed in all. ``traceback``: the traceback of
    the exception the solver raised (verdict "error"; empty otherwise). The table shows both only when asked
    (:meth:`details` with ``verbose``; ``svmref verify --verbose``).
    """

    formulation: str
    solver: str
    instance: str
    passed: bool | None
    verdict: str
    reason: str
    objective: float = float("nan")
    reference_objective: float = float("nan")
    objective_gap: float = float("nan")
    kkt_violation: float = float("nan")
    duality_gap: float = float("nan")
    decision_gap: float = float("nan")
    time: float = float("nan")
    reference_time: float = float("nan")
    reference_disagreement: float = float("nan")
    N: int = 0
    hyper: dict = field(default_factory=dict)
    residuals: dict = field(default_factory=dict)
    b_derived: bool = False
    notes: list = field(default_factory=list)
    diagnoses: list = field(default_factory=list)
    hints: list = field(default_factory=list)
    would_pass_at_tol: float | None = None
    solver_tol: float | None = None
    b_interval: list | None = None
    reference_certified: bool | None = None
    b_gap: float = float("nan")
    reference_resolution: dict = field(default_factory=dict)
    solver_output: str = ""
    solver_output_lines: int = 0
    traceback: str = ""
    bias_free_gap: float = float("nan")
    solver_status: str | None = None
    solver_message: str = ""
    solver_warnings: list = field(default_factory=list)
    solver_warnings_total: int = 0
    solver_tol_parameter: str | None = None

    def row(self) -> str:
        """One line of the table (see :meth:`Report.table`)."""
        solver = self.solver if len(self.solver) <= 28 else "..." + self.solver[-25:]
        reason = self.reason if len(self.reason) <= 160 else self.reason[:157] + "..."
        return (f"{self.formulation:{FORMULATION_WIDTH}s} {solver:28s} {self.instance[:28]:28s} {self.verdict:10s} "
                f"{_f(self.objective_gap)} {_f(self.kkt_violation)} {_f(self.duality_gap)} {_f(self.decision_gap)} "
                f"{_f(self.time)}  {reason}")

    def details(self, verbose: bool = False) -> list[str]:
        """The indented lines under a row.

        Parameters
        ----------
        verbose : bool
            Also the solver's traceback (``    ! `` lines) and its captured output (``    | `` lines), for any
            verdict.

        Returns
        -------
        list of str
            Under a failed row: its diagnoses, the tolerance it would pass at, hints; then, with ``verbose``,
            the traceback and the output.
        """
        out = self._advice() if self.passed is False else []
        if self.passed is None and len(self.reason) > 160:  # a verdict that is no verdict says its whole reason
            out.append(f"    {self.reason}")
        if verbose and self.traceback:
            out.append("    solver traceback:")
            out += [f"    ! {ln}" for ln in self.traceback.rstrip("\n").splitlines()]
        if verbose and self.solver_output_lines:
            out.append(f"    solver output ({self.solver_output_lines} line(s)):")
            out += [f"    | {ln}" for ln in self.solver_output.splitlines()]
        return out

    def _advice(self) -> list[str]:
        out = [f"    - {d}" for d in self.diagnoses]
        if self.verdict != "fail" and len(self.reason) > 160:  # an error's whole message (the row cuts it)
            out.insert(0, f"    {self.reason}")
        if self.verdict == "fail":
            out.append(f"    would pass at --tol {self.would_pass_at_tol:.0e}" if self.would_pass_at_tol is not None
                       else "    would not pass at any --tol < 1")
        out += [f"    {h}" for h in self.hints]
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        return {k: _jsonable(v) for k, v in d.items()}


def _jsonable(v):
    if isinstance(v, float):
        return v if math.isfinite(v) else (None if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.floating,)):
        return _jsonable(float(v))
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _f(x: float, width: int = 8) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-".rjust(width)
    if isinstance(x, float) and math.isinf(x):
        return "inf".rjust(width)
    return f"{x:.1e}".rjust(width)


class Report:
    """A table of :class:`Record` objects: printable, iterable, convertible to records and JSON.

    ``passed`` is True when no instance failed or errored (instances whose reference is not convex
    are reported apart and do not count either way).
    """

    def __init__(self, records: list[Record] | None = None, tol: float = float("nan"), skipped: list[str] | None = None):
        self.records: list[Record] = list(records or [])
        self.tol = tol
        self.skipped: list[str] = list(skipped or [])
        self.notes: list[str] = []
        self.interrupted = False
        self.planned: int | None = None

    # -- container protocol
    def __iter__(self):
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i):
        if isinstance(i, str):
            for r in self.records:
                if r.instance == i:
                    return r
            raise KeyError(i)
        return self.records[i]

    def extend(self, other: Report) -> None:
        self.records.extend(other.records)
        self.skipped.extend(other.skipped)
        self.notes.extend(n for n in other.notes if n not in self.notes)
        self.interrupted = self.interrupted or other.interrupted
        if other.planned is not None:
            self.planned = (self.planned or 0) + other.planned

    @property
    def suite_tol(self) -> float | None:
        """The tolerance at which every failed instance would pass (None: some never would, or none failed)."""
        fails = self.failures
        if not fails or any(r.would_pass_at_tol is None for r in fails):
            return None
        return max(r.would_pass_at_tol for r in fails)

    # -- verdicts
    @property
    def passed(self) -> bool:
        """At least one instance judged and none failed: a report with nothing judged (no records, or only "not
        convex", "no reference", "unresolved" or "different problem") is no evidence, so it has not passed."""
        return self.judged > 0 and all(r.passed is not False for r in self.records)

    @property
    def judged(self) -> int:
        """How many instances were judged (pass or fail; not "not convex", "no reference", "unresolved" or "different
        problem"). A report that passed with none judged is no evidence: its summary says NOT JUDGED, and the command
        line exits 1."""
        return sum(r.passed is not None for r in self.records)

    @property
    def failures(self) -> list[Record]:
        return [r for r in self.records if r.passed is False]

    def to_records(self) -> list[dict]:
        """One dict per instance (JSON-ready: non-finite floats as ``None``/``"inf"``)."""
        return [r.to_dict() for r in self.records]

    def to_json(self, path=None) -> str:
        text = json.dumps({"passed": self.passed, "tol": _jsonable(float(self.tol)), "summary": _jsonable(self.summary()),
                           "interrupted": self.interrupted, "notes": self.notes,
                           "skipped": self.skipped, "records": self.to_records()}, indent=2)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    def summary(self) -> dict:
        """Success rate and shifted geometric means (see module docstring)."""
        judged = [r for r in self.records if r.passed is not None]
        n_pass = sum(r.passed is True for r in judged)
        return {
            "instances": len(self.records),
            "passed": n_pass,
            "failed": sum(r.passed is False for r in judged),
            "not_convex": sum(r.verdict == "not convex" for r in self.records),
            "no_reference": sum(r.verdict == "no reference" for r in self.records),
            "unresolved": sum(r.verdict == "unresolved" for r in self.records),
            "different_problem": sum(r.verdict == "different problem" for r in self.records),
            "success_rate": (n_pass / len(judged)) if judged else float("nan"),
            "time_sgm": shifted_geometric_mean([r.time for r in self.records], TIME_SHIFT),
            "objective_gap_sgm": shifted_geometric_mean([r.objective_gap for r in self.records], RESIDUAL_SHIFT),
            "kkt_violation_sgm": shifted_geometric_mean([r.kkt_violation for r in self.records], RESIDUAL_SHIFT),
            "duality_gap_sgm": shifted_geometric_mean([r.duality_gap for r in self.records], RESIDUAL_SHIFT),
            "non_finite": sum(not np.isfinite(r.kkt_violation) for r in self.records if r.verdict != "not convex"),
            "timeouts": sum(r.verdict == "timeout" for r in self.records),
            "would_pass_at_tol": self.suite_tol,
            "interrupted": self.interrupted,
            "planned": self.planned,
            "solver_output_lines": sum(r.solver_output_lines for r in self.records),
            "tracebacks": sum(bool(r.traceback) for r in self.records),
        }

    @staticmethod
    def header() -> str:
        """The table's heading (two lines)."""
        head = (f"{'formulation':{FORMULATION_WIDTH}s} {'solver':28s} {'instance':28s} {'verdict':10s} "
                f"{'obj gap':>8s} {'KKT':>8s} {'dual gap':>8s} {'f gap':>8s} {'time s':>8s}  reason")
        return head + "\n" + "-" * len(head)

    def table(self, verbose: bool = False) -> str:
        """The heading and one row per record with its details (:meth:`Record.details`)."""
        lines = [self.header()]
        for r in self.records:
            lines.append(r.row())
            lines.extend(r.details(verbose))
        return "\n".join(lines)

    def summary_text(self, verbose: bool = False) -> str:
        """The summary under the table: success rate, means, advice, notes and the verdict.

        Without ``verbose`` it also says how much solver output and how many tracebacks were captured and not
        shown (:meth:`table` with ``verbose`` shows them).
        """
        s = self.summary()
        rate = "n/a" if math.isnan(s["success_rate"]) else f"{100 * s['success_rate']:.1f}%"
        out = (f"{s['passed']}/{s['passed'] + s['failed']} passed (success rate {rate})"
               + (f", {s['not_convex']} not judged (reference not convex)" if s["not_convex"] else "")
               + (f", {s['no_reference']} not judged (the reference solver failed)" if s["no_reference"] else "")
               + (f", {s['unresolved']} not judged (the reference cannot resolve tol)" if s["unresolved"] else "")
               + (f", {s['different_problem']} not judged (a different problem)" if s["different_problem"] else "")
               + f" at tol = {self.tol:g}; shifted geometric means: time {_f(s['time_sgm']).strip()} s, "
               f"objective gap {_f(s['objective_gap_sgm']).strip()}, KKT {_f(s['kkt_violation_sgm']).strip()}, "
               f"duality gap {_f(s['duality_gap_sgm']).strip()}")
        if s["failed"]:
            st = self.suite_tol
            if st is not None:
                out += f"\nthe whole suite would pass at --tol {st:.0e}"
            else:
                fails = self.failures
                n_to = sum(r.verdict == "timeout" for r in fails)
                n_err = sum(r.verdict == "error" for r in fails)
                n_far = sum(r.verdict == "fail" and r.would_pass_at_tol is None for r in fails)
                why = [t for t in (f"{n_to} timed out" if n_to else "", f"{n_err} error(s)" if n_err else "",
                                   f"{n_far} too far off" if n_far else "") if t]
                out += "\nno --tol < 1 makes the whole suite pass: " + ", ".join(why)
                tols_ok = [r.would_pass_at_tol for r in fails if r.would_pass_at_tol is not None]
                if tols_ok:
                    out += f" (the other failures would pass at --tol {max(tols_ok):.0e})"
        for n in self.notes:
            out += f"\nnote: {n}"
        if not verbose:
            out += self._hidden(s)
        if self.skipped:
            out += "\nskipped:\n" + "\n".join(f"  {m}" for m in self.skipped)
        if self.interrupted:
            done = len(self.records)
            total = f" of {self.planned}" if self.planned is not None else ""
            out += f"\ninterrupted (Ctrl-C) after {done}{total} instance(s): the verdict covers only those"
        if not self.judged and not self.failures:
            what = ", ".join(sorted({r.verdict for r in self.records})) or "none was run"
            out += f"\nverdict: NOT JUDGED (no instance was judged: {what}; no evidence either way)"
        else:
            out += "\nverdict: " + ("PASS" if self.passed else "FAIL") + (" (partial)" if self.interrupted else "")
        return out

    def _hidden(self, s: dict) -> str:
        """The lines that say what was captured and not shown: solver output, tracebacks."""
        out = ""
        where = "not shown: svmref verify --verbose prints {what}; --json and each record's {field} keep {what}"
        if s["solver_output_lines"]:
            n_inst = sum(r.solver_output_lines > 0 for r in self.records)
            out += (f"\nthe solver printed {s['solver_output_lines']} line(s) on {n_inst} instance(s), captured and "
                    + where.format(what="them", field="solver_output"))
        if s["tracebacks"]:
            out += (f"\nthe solver raised on {s['tracebacks']} instance(s); the tracebacks are "
                    + where.format(what="them", field="traceback"))
        return out

    def __str__(self) -> str:
        return self.table() + "\n\n" + self.summary_text()

    def __repr__(self) -> str:
        s = self.summary()
        return f"<Report {s['passed']}/{s['passed'] + s['failed']} passed, {s['not_convex']} not convex, tol={self.tol:g}>"

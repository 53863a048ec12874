"""verify for solvers in any language: instances exported to files, answers read back from files.

``svmref suite export DIR --formulation F [--suite S | --data FILE.csv --C C ...]`` (:func:`export`) writes

* ``DIR/manifest.json``: the format, the formulation, the contract in words (what an answer holds and how it makes
  the decision function), and one entry per instance: its name, N, d, kernel and kernel parameters, hyperparameters
  (in the order of the text files' second line), and whether its text file holds K;
* ``DIR/NAME.npz`` per instance: ``X``, ``y``, ``X_test``, ``K`` where ``N <= KERNEL_MAX_N``, and the weights ``v``
  of a weighted formulation (``weighted_ls_svm``, ``weighted_ls_svm_regression``);
* ``DIR/NAME.txt``, the same for a program that reads text with ``scanf``: a line ``N d has_K``, a line of the
  hyperparameters, then N lines of ``y_i``, then (weighted formulations) N lines of ``v_i``, then (if ``has_K``)
  N lines of K's rows, then N lines of X's rows.

A program writes its answer for instance NAME to ``DIR/answers/NAME.npz`` (arrays named as the contract says:
``alpha`` and ``b``; ``c`` for RLS; ``lam`` and/or ``a`` (or ``w``) with ``b`` for the support features machine) or to
``DIR/answers/NAME.txt`` (the N numbers of the vector one per line, then ``b`` where the formulation has one).
``svmref verify --answers DIR`` (:func:`check_answers`) judges every answer found against the reference, exactly as it
judges a Python solver's, and says which instances have none. docs/verify.md shows a C program that does this.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from . import specs
from .answers import BadAnswer
from .core import DEFAULT_TOL, check, check_verify_tol
from .data import Instance, weights_of
from .report import Report

__all__ = ["export", "load_exported", "read_answer", "check_answers", "KERNEL_MAX_N", "FORMAT", "main"]

#: The format of the manifest (bumped when a file changes its layout).
FORMAT = 1
#: Largest N whose instance files carry K (an N x N matrix of doubles: 8 N^2 bytes; 2000 is 32 MB).
KERNEL_MAX_N = 2000
_NAME = re.compile(r"^[A-Za-z0-9._@+-]+$")


def _safe(name: str) -> str:
    """The instance's name as a file name (verify's names are; a user's --data name is made so)."""
    return name if _NAME.match(name) else re.sub(r"[^A-Za-z0-9._@+-]", "_", name)


def _text_instance(path: Path, inst: Instance, hyper_order: list[str], with_K: bool, weights) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(f"{inst.N} {inst.X.shape[1]} {int(with_K)}\n")
        fh.write(" ".join(repr(float(inst.hyper[k])) for k in hyper_order) + "\n")
        fh.writelines(f"{float(v)!r}\n" for v in inst.y)
        if weights is not None:
            fh.writelines(f"{float(v)!r}\n" for v in weights)
        if with_K:
            for row in inst.K:
                fh.write(" ".join(repr(float(v)) for v in row) + "\n")
        for row in inst.X:
            fh.write(" ".join(repr(float(v)) for v in row) + "\n")


def export(directory, formulation: str, instances) -> Path:
    """Write ``instances`` of ``formulation`` to ``directory`` (created; see the module docstring); returns the manifest's
    path. An ``answers/`` folder is made for the program's answers."""
    spec = specs.get(formulation)
    out = Path(directory)
    (out / "answers").mkdir(parents=True, exist_ok=True)
    entries = []
    for inst in instances:
        name = _safe(inst.name)
        order = list(inst.hyper)
        with_K = inst.N <= KERNEL_MAX_N and not spec.on_features
        arrays = {"X": inst.X, "y": inst.y, "X_test": inst.X_test}
        if with_K:
            arrays["K"] = inst.K
        weights = weights_of(inst) if "v" in spec.instance_keywords else None
        if weights is not None:
            arrays["v"] = weights
        np.savez(out / f"{name}.npz", **arrays)
        _text_instance(out / f"{name}.txt", inst, order, with_K, weights)
        entries.append({"name": name, "N": inst.N, "d": int(inst.X.shape[1]), "kernel": inst.kernel,
                        "kernel_params": dict(inst.kernel_params), "hyper": {k: float(inst.hyper[k]) for k in order},
                        "hyper_order": order, "has_K": with_K, "unique": bool(inst.unique),
                        "description": inst.description})
    manifest = {"format": FORMAT, "formulation": formulation, "call": spec.call, "contract": spec.answer_words,
                "answer_files": {"npz": f"answers/NAME.npz with arrays {spec.answer_vector}"
                                        + (" and b" if spec.has_b else ""),
                                 "txt": f"answers/NAME.txt: {spec.answer_vector}_1 ... {spec.answer_vector}_N one per line"
                                        + (", then b" if spec.has_b else "")},
                "instance_txt": "line 1: N d has_K; line 2: the hyperparameters in hyper_order; then N lines y_i; then "
                                + ("N lines v_i (the weights); then " if "v" in spec.instance_keywords else "")
                                + "(if has_K) N lines of K's rows; then N lines of X's rows",
                "instances": entries}
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return path


def load_exported(directory) -> tuple[str, list[Instance]]:
    """The formulation and the instances of an exported ``directory`` (``ValueError`` saying what is missing)."""
    d = Path(directory)
    try:
        manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{d} has no manifest.json: export instances with 'svmref suite export {d} -f FORMULATION'") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{d / 'manifest.json'} is not JSON ({exc})") from None
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{d / 'manifest.json'} has format {manifest.get('format')!r}; this svmref reads {FORMAT}")
    formulation = manifest["formulation"]
    specs.get(formulation)
    out = []
    for e in manifest["instances"]:
        with np.load(d / f"{e['name']}.npz") as z:
            X, y, Xt = z["X"], z["y"], z["X_test"]
            v = z["v"] if "v" in z.files else None
        out.append(Instance(e["name"], X, y, Xt, e["kernel"], dict(e["kernel_params"]), dict(e["hyper"]),
                            bool(e.get("unique", True)), e.get("description", ""), weights=v))
    return formulation, out


def read_answer(directory, formulation: str, inst: Instance):
    """The answer a program wrote for ``inst`` (``answers/NAME.npz`` or ``answers/NAME.txt``), as a dict the
    formulation's reader takes; None when there is none. ``BadAnswer`` says what is wrong with a file."""
    spec = specs.get(formulation)
    base = Path(directory) / "answers" / inst.name
    npz, txt = base.with_name(base.name + ".npz"), base.with_name(base.name + ".txt")
    if npz.exists():
        try:
            with np.load(npz) as z:
                ans = {k: (z[k] if z[k].ndim else float(z[k])) for k in z.files}
        except (OSError, ValueError) as exc:
            raise BadAnswer(f"{npz} cannot be read as .npz ({exc})") from None
        if "w" in ans and "a" not in ans:
            ans["a"] = ans.pop("w")
        return ans
    if txt.exists():
        try:
            v = np.loadtxt(txt, dtype=float, ndmin=1)
        except ValueError as exc:
            raise BadAnswer(f"{txt}: not one number per line ({exc})") from None
        need = inst.N + (1 if spec.has_b else 0)
        if v.size != need:
            raise BadAnswer(f"{txt} has {v.size} numbers; an answer to {formulation} on {inst.name} has {need} "
                            f"({spec.answer_vector}_1 ... {spec.answer_vector}_{inst.N}" + (", then b)" if spec.has_b else ")"))
        ans = {spec.answer_vector: v[:inst.N]}
        if spec.has_b:
            ans["b"] = float(v[inst.N])
        return ans
    return None


def _fixed(answer):
    def answered(*args, **kwargs):
        return answer
    return answered


def check_answers(directory, tol: float = DEFAULT_TOL, *, name: str | None = None, on_record=None,
                  certificate: bool | None = None, client=None) -> Report:
    """Judge every answer in ``directory/answers`` against the reference (or by its certificate: ``certificate`` as
    for :func:`svmref.verify.check`; a Dask ``client`` makes the kernel's blocks on its cluster); the instances without
    one are listed in ``report.skipped`` ("no answer for NAME")."""
    from .blockwise import maybe_blockwise

    formulation, insts = load_exported(directory)
    insts = maybe_blockwise(insts, client)
    label = name or f"answers in {directory}"
    report = Report([], check_verify_tol(tol))
    report.planned = len(insts)
    for inst in insts:
        try:
            answer = read_answer(directory, formulation, inst)
        except BadAnswer as exc:
            answer = None
            report.skipped.append(f"{inst.name}: unusable answer file: {exc}")
            continue
        if answer is None:
            report.skipped.append(f"{inst.name}: no answer (answers/{inst.name}.npz or .txt)")
            continue
        report.extend(check(_fixed(answer), formulation, [inst], tol, name=label, on_record=on_record,
                            certificate=certificate))
    return report


# ------------------------------------------------------------------------------------------ svmref suite export


def main(argv: list[str] | None = None) -> int:
    """``svmref suite export DIR --formulation F [--suite S | --data FILE.csv --C C --sigma S --epsilon E]``."""
    import sys

    from svmref.cli import ArgumentParser, UsageError

    from .instances import SUITES

    p = ArgumentParser(prog="svmref suite", description="Export verify's instances for a solver in any language "
                       "(svmref suite export DIR -f F); its answers are judged by 'svmref verify --answers DIR'.")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    e = sub.add_parser("export", help="write DIR/manifest.json and DIR/NAME.npz, DIR/NAME.txt per instance")
    e.add_argument("directory", metavar="DIR")
    e.add_argument("--formulation", "-f", required=True, metavar="NAME")
    e.add_argument("--suite", "-s", default="quick", choices=SUITES)
    e.add_argument("--data", metavar="FILE.csv")
    e.add_argument("--C", default=None)
    e.add_argument("--sigma", default=None)
    e.add_argument("--epsilon", default=None)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.action != "export":
        p.print_help()
        return 2
    try:
        return _export_command(args)
    except UsageError as exc:
        print(f"svmref suite: error: {exc}", file=sys.stderr)
        return 2


def _export_command(args) -> int:
    from svmref.cli import UsageError, check_number

    from .instances import from_data, load_csv, suite

    if args.formulation not in specs.names():
        raise UsageError(f"unknown --formulation {args.formulation!r}; expected one of {', '.join(specs.names())}")
    if os.path.exists(args.directory) and not os.path.isdir(args.directory):
        raise UsageError(f"DIR: {args.directory!r} exists and is not a folder")
    if args.data is None:
        if any(v is not None for v in (args.C, args.sigma, args.epsilon)):
            raise UsageError("--C, --sigma and --epsilon go with --data (the suites fix their own)")
        insts = suite(args.suite, args.formulation)
    else:
        try:
            X, y = load_csv(args.data)
            extra = {} if args.epsilon is None else {"epsilon": check_number(args.epsilon, "--epsilon", low=0.0,
                                                                             low_open=False)}
            C = 1.0 if args.C is None else check_number(args.C, "--C", low=0.0)
            sigma = None if args.sigma is None else check_number(args.sigma, "--sigma", low=0.0)
            insts = [from_data(X, y, args.formulation, C=C, sigma=sigma,
                               name="data-" + Path(args.data).stem, **extra)]
        except (OSError, ValueError) as exc:
            raise UsageError(f"--data: {args.data!r}: {exc}") from None
    path = export(args.directory, args.formulation, insts)
    print(f"wrote {path} and {len(insts)} instance(s) ({', '.join(i.name for i in insts)}); write the answers to "
          f"{Path(args.directory) / 'answers'}/NAME.npz or NAME.txt, then run: svmref verify --answers {args.directory}")
    return 0

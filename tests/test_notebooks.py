"""The teaching notebooks of ``docs/notebooks/``: up to date with their generator, and they run.

``docs/notebooks/build.py`` writes, from each formulation page and the worked example (their prose, maths and
````pycon`` blocks) and from ``docs/notebooks/exercises/<page>.md``, a student notebook ``docs/notebooks/<page>.ipynb``
and a teacher notebook ``docs/notebooks/teacher/<page>.ipynb``. Here:

* (fast) the committed notebooks are what the generator writes now (regenerated into a temporary folder, compared cell
  by cell: type, source, tags), every page has both versions, and each has at least three exercises of the three kinds
  (derive, predict, break), the student version with a stub where the teacher version has a solution; the pieces of
  the generator and of ``docs/notebooks/site_hooks.py`` on small inputs;
* (slow) every teacher notebook runs top to bottom without an error (nbclient, kernel ``python3`` of ipykernel, 120 s
  per cell), and every student notebook runs with its stubs failing, and only them: each error is the
  ``NotImplementedError`` of a cell tagged ``exercise-stub``, and every other cell runs.

Without nbformat (fast) or nbclient and ipykernel (slow) the tests skip, naming the package (``pip install -e
'.[docs]'``); with ``SVMREF_REQUIRE_BROWSER=1``, as ``.ci/run`` sets it, a missing package is a failure.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "docs" / "notebooks"
REQUIRED = os.environ.get("SVMREF_REQUIRE_BROWSER") == "1"
PAGES = [p.stem for p in sorted((ROOT / "docs" / "formulations").glob("*.md"))] + ["worked_example"]
CELL_TIMEOUT = 120


def _need(module: str):
    try:
        return __import__(module)
    except ImportError:
        why = f"{module} is not installed (pip install -e '.[docs]')"
        if REQUIRED:
            pytest.fail(why + " (SVMREF_REQUIRE_BROWSER=1)")
        pytest.skip(reason=why)


def _load(name: str):
    """``docs/notebooks/<name>.py`` as a module (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"_svmref_notebooks_{name}", NOTEBOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build():
    _need("nbformat")
    return _load("build")


def _cells(path: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c["cell_type"], "".join(c["source"]), tuple(c.get("metadata", {}).get("tags", []))) for c in nb["cells"]]


def _committed() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb")) + sorted((NOTEBOOKS / "teacher").glob("*.ipynb"))


# --------------------------------------------------------------------------------------------------
# fast: generated, complete, and the pieces of the generator
# --------------------------------------------------------------------------------------------------
def test_committed_notebooks_are_what_the_generator_writes(build, tmp_path):
    fresh = build.write_all(tmp_path)
    want = sorted(p.relative_to(tmp_path).as_posix() for p in fresh)
    have = sorted(p.relative_to(NOTEBOOKS).as_posix() for p in _committed())
    assert have == want, f"committed {have}, generated {want}: run python docs/notebooks/build.py"
    stale = [rel for rel in want if _cells(NOTEBOOKS / rel) != _cells(tmp_path / rel)]
    assert not stale, f"out of date with their page or exercise file: {stale}; run python docs/notebooks/build.py"


@pytest.mark.parametrize("page", PAGES)
def test_each_page_has_a_student_and_a_teacher_notebook_with_three_kinds_of_exercise(page):
    student, teacher = NOTEBOOKS / f"{page}.ipynb", NOTEBOOKS / "teacher" / f"{page}.ipynb"
    assert student.is_file() and teacher.is_file(), f"no notebook for {page}: run python docs/notebooks/build.py"
    meta = json.loads(student.read_text(encoding="utf-8"))["metadata"]["svmref"]
    assert len(meta["exercises"]) >= 3 and set(meta["exercises"]) == {"derive", "predict", "break"}, meta
    s, t = _cells(student), _cells(teacher)
    stubs = [src for kind, src, tags in s if "exercise-stub" in tags]
    solutions = [src for kind, src, tags in t if kind == "code" and "solution" in tags]
    assert len(stubs) == len(solutions) >= 3 and all("raise NotImplementedError" in src for src in stubs)
    assert not any("solution" in tags for _, _, tags in s), "the student notebook holds a solution"
    assert not set(solutions) & {src for _, src, _ in s}, "a solution's code is in the student notebook"
    assert [c for c in s[1:] if not c[2]] == [c for c in t[1:] if not c[2]], "the shared cells differ between the versions"
    assert f"](../{'formulations/' if page != 'worked_example' else ''}{page}.md)" in s[0][1], "no link back to the page"


def test_pycon_blocks_become_code_cells(build):
    block = "\n".join([
        ">>> import math", ">>> def f(x):", "...     return 2 * x", "...", ">>> f(2)  # doctest: +ELLIPSIS", "4",
        ">>> x = 1", ">>> f('a')", "Traceback (most recent call last):", "TypeError: ...",
        ">>> slow()  # doctest: +SKIP", "1", ">>> y = x"])
    cells = build.pycon_cells(block)
    assert cells[0] == "import math\ndef f(x):\n    return 2 * x\n\nf(2)"
    assert cells[1].startswith("x = 1\ntry:\n    f('a')\nexcept Exception as exc:")
    assert cells[2] == "y = x" and len(cells) == 3


def test_the_generator_refuses_an_incomplete_exercise_file(build, tmp_path):
    body = "# Exercises\n\nIntro.\n\n" + "".join(
        f"## Exercise {k} ({kind}): title {k}\n\nText.\n\n```python solution\nx = {k}\n```\n\n"
        for k, kind in enumerate(["derive", "predict", "break"], 1))
    good = tmp_path / "good.md"
    good.write_text(body, encoding="utf-8")
    assert build.read_exercises(good).kinds == ["derive", "predict", "break"]
    for bad in (body.replace("(break)", "(predict)"), body.replace("title 2", "the $x$"),
                body.replace("Exercise 3", "Exercise 4"), body.replace("```python solution\nx = 1", "```python student\nx = 1")):
        (tmp_path / "bad.md").write_text(bad, encoding="utf-8")
        with pytest.raises(ValueError):
            build.read_exercises(tmp_path / "bad.md")


def test_links_are_rewritten_for_the_notebook_folder(build):
    page = build.DOCS / "formulations"
    text = "[a](../duality.md#x) [b](../../formulations/svm.py) [c](https://e.org/a.md) [d](#here) ![i](../img/p.png)"
    assert build.rewrite_links(text, page) == (
        "[a](../duality.md#x) [b](../../formulations/svm.py) [c](https://e.org/a.md) [d](#here) ![i](../img/p.png)")
    assert build.rewrite_links("[w](worked_example.md)", build.DOCS) == "[w](../worked_example.md)"


def test_site_hooks_typeset_like_arithmatex_and_point_links_at_site_pages(tmp_path):
    hooks = _load("site_hooks")
    html = '<p>$x_i$ and $$\nK\n$$ and <code>$y$</code> <a href="../duality.md#s">d</a> <a href="https://x.org/a.md">e</a></p>'
    out = hooks.math_to_arithmatex(html)
    assert '<span class="arithmatex">\\(x_i\\)</span>' in out and '<span class="arithmatex">\\[K\\]</span>' in out
    assert "<code>$y$</code>" in out and out.count("arithmatex") == 2

    class Files:
        def get_file_from_path(self, path):
            return object() if path == "code/formulations/svm.py.md" else None

    docs = hooks.ROOT / "docs"
    linked = hooks.site_links(out + '<a href="../../formulations/svm.py">svmref.formulations.svm.L1SVM.dual</a>',
                              "notebooks/l1_svm.ipynb", docs, Files())
    assert 'href="../duality.html#s"' in linked and 'href="https://x.org/a.md"' in linked
    assert 'href="../code/formulations/svm.py.html#L1SVM"' in linked


# --------------------------------------------------------------------------------------------------
# slow: they run
# --------------------------------------------------------------------------------------------------
def _execute(path: Path, allow_errors: bool):
    nbformat, nbclient = _need("nbformat"), _need("nbclient")
    _need("ipykernel")
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    print(f"{path.relative_to(ROOT)}: {time.perf_counter() - start:.1f} s")
    return nb


def _errors(nb) -> list[tuple[int, object, object]]:
    return [(k, cell, out) for k, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.get("output_type") == "error"]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_teacher_notebook_runs_without_an_error(page):
    nb = _execute(NOTEBOOKS / "teacher" / f"{page}.ipynb", allow_errors=False)
    assert not _errors(nb)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_student_notebook_stops_only_at_its_stubs(page):
    nb = _execute(NOTEBOOKS / f"{page}.ipynb", allow_errors=True)
    errors = _errors(nb)
    stubs = [k for k, cell in enumerate(nb.cells) if "exercise-stub" in cell.metadata.get("tags", [])]
    bad = [f"cell {k}: {out['ename']}: {out['evalue']}\n{cell.source[:200]}" for k, cell, out in errors
           if k not in stubs or out["ename"] != "NotImplementedError"]
    assert not bad, "errors other than the stubs' NotImplementedError:\n" + "\n".join(bad)
    assert sorted(k for k, _, _ in errors) == stubs, "a stub cell ran without raising NotImplementedError"
    assert min(stubs) > max(k for k, cell in enumerate(nb.cells) if cell.source.startswith("## Exercises"))

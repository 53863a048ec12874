"""Honest "Checked by" links: a derivation step is linked to a test that solves the problem as written.

The rule, precisely (checked with :mod:`ast` on the test files, nothing imported, < 1 s):

1. **Where.** The derivation pages are ``docs/formulations/*.md``, ``docs/duality.md`` and
   ``docs/worked_example.md``. A
   "Checked by" paragraph starts at a line containing ``Checked by`` and runs to the next blank line; its
   links whose text is a test name (``test_...``) are the tests it cites.
2. **Every display block is checked.** After every ``$$ ... $$`` block of a derivation page, a "Checked by"
   paragraph follows before the next display block, the next heading or the end of the page.
3. **Every cited test solves something as written.** The source of the cited test function, together
   with the module-level functions of its own file that it calls (transitively), must contain an
   independent computation of the optimum: ``as_written(`` (``tests/instances.py``: a plain
   :class:`cvxpy.Problem` with the model's objective and constraints, CLARABEL at tight tolerances),
   ``cp.Problem(`` (a problem built in the test itself), or ``method="cvxpy"`` (the reference forced
   through the conic solver on the model). Calling ``F.solve`` on a form alone does not count: for the
   box problems it rebuilds the primal from the dual's alpha and for the equality problems it solves the
   KKT system by LAPACK, so an equality between that and the dual or the system holds by construction.
   A test whose evidence is of another kind (a scalar minimisation against a fine grid) is listed in
   :data:`OTHER_EVIDENCE` with the marker its source must contain and why that evidence is independent.
4. **Known by-construction tests are never cited.** :data:`BY_CONSTRUCTION` names tests that hold by
   construction or check only names; no "Checked by" paragraph on any page of ``docs/`` may cite one.

The rule reads source text, so it cannot prove that the independent solve is the side the assertion
uses; it catches a link to a test that has none at all, which is how the dishonest links looked. Each
test cited on these pages was also broken on a scratch copy to see it fail (the closing note of the
change lists the mutations).
"""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

LINK = re.compile(r"(?<!!)\[(test_[A-Za-z0-9_]+)\]\(([^)\s]+)\)")
INDEPENDENT = re.compile(r"\bas_written\(|\bcp\.Problem\(|method\s*=\s*[\"']cvxpy[\"']")

#: tests that hold by construction or check names only: never cited by a "Checked by" paragraph
BY_CONSTRUCTION = {
    "test_rls_equals_cvxpy_functional": "its 'cvxpy' side is F.solve, a LAPACK solve of system (8), compared "
                                        "with the LAPACK solve of the fast solver",
    "test_variables_are_named_as_in_the_papers": "checks variable names only, no value",
    "test_support_features_variables": "checks variable names only, no value",
}

#: test name -> (marker its source must contain, why that evidence is independent of the reference)
OTHER_EVIDENCE = {
    "test_sfm_soft_threshold_minimises_L_i": (
        "np.arange(", "the scalar minimisation of L_i against a fine grid (np.arange): no solver involved"),
    "test_sfm_dual_gradient_against_the_model": (
        "objective.value", "central differences of the cvxpy model's own objective: no solver involved"),
    "test_weak_duality_at_random_feasible_pairs": (
        "objective.value", "the cvxpy models' own objectives at feasible points drawn at random: an inequality between "
        "two evaluations, no solve needed"),
    "test_regularised_bias_is_the_problem_liblinear_solves": (
        "LinearSVC(", "LIBLINEAR's dual coordinate descent through scikit-learn: another implementation of the problem"),
}


def derivation_pages() -> list[Path]:
    pages = sorted((DOCS / "formulations").glob("*.md"))
    pages += [DOCS / name for name in ("duality.md", "worked_example.md") if (DOCS / name).exists()]
    return pages


def checked_by_paragraphs(text: str) -> list[tuple[int, str]]:
    """(line number, paragraph text) of every "Checked by" paragraph (fenced code blanked)."""
    lines, out, fence = text.splitlines(), [], False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence or "Checked by" not in line:
            continue
        para = [line]
        for nxt in lines[n:]:
            if not nxt.strip():
                break
            para.append(nxt)
        out.append((n, "\n".join(para)))
    return out


def unchecked_displays(text: str) -> list[int]:
    """Line numbers of display blocks that no "Checked by" line follows before the next block or heading."""
    bad, lines, n = [], text.splitlines(), 0
    opens = []
    in_block = False
    for i, line in enumerate(lines):
        if line.strip() == "$$":
            if not in_block:
                opens.append(i)
            in_block = not in_block
    for k, start in enumerate(opens):
        end = next(j for j in range(start + 1, len(lines)) if lines[j].strip() == "$$")
        stop = opens[k + 1] if k + 1 < len(opens) else len(lines)
        n = next((j for j in range(end + 1, stop) if lines[j].startswith("#")), stop)
        if not any("Checked by" in lines[j] for j in range(end + 1, n)):
            bad.append(start + 1)
    return bad


@cache
def _module(path: Path) -> tuple[ast.Module, str]:
    src = path.read_text(encoding="utf-8")
    return ast.parse(src), src


def evidence_source(path: Path, name: str) -> str | None:
    """The source of test ``name`` in ``path`` and of the module-level functions it calls, transitively;
    ``None`` when the file has no such function."""
    tree, src = _module(path)
    funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if name not in funcs:
        return None
    seen, todo, parts = set(), [name], []
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        node = funcs[f]
        parts.append(ast.get_source_segment(src, node) or "")
        todo += [c.func.id for c in ast.walk(node)
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in funcs]
    return "\n".join(parts)


def link_problems(page: Path, name: str, target: str) -> str | None:
    """Why citing test ``name`` at ``target`` from ``page`` is not honest, or ``None``."""
    if name in BY_CONSTRUCTION:
        return f"{name} is known to hold by construction ({BY_CONSTRUCTION[name]})"
    path = (page.parent / target.split("#")[0]).resolve()
    if not path.is_file():
        return f"{target} does not exist"
    src = evidence_source(path, name)
    if src is None:
        return f"{path.name} defines no {name}"
    if name in OTHER_EVIDENCE:
        marker, _why = OTHER_EVIDENCE[name]
        return None if marker in src else f"{name} is listed with evidence {marker!r} but its source has none"
    if not INDEPENDENT.search(src):
        return (f"{name} solves nothing as written (no as_written(, cp.Problem( or method='cvxpy' in it or the "
                f"helpers it calls)")
    return None


@pytest.mark.parametrize("page", derivation_pages(), ids=lambda p: p.name)
def test_every_display_is_followed_by_a_checked_by_line(page):
    bad = unchecked_displays(page.read_text(encoding="utf-8"))
    assert not bad, f"{page.relative_to(ROOT)}: display blocks at lines {bad} have no Checked by line after them"


@pytest.mark.parametrize("page", derivation_pages(), ids=lambda p: p.name)
def test_every_checked_by_link_solves_the_problem_as_written(page):
    paras = checked_by_paragraphs(page.read_text(encoding="utf-8"))
    assert paras, f"{page.name} has no Checked by line"
    bad = []
    for n, para in paras:
        cited = LINK.findall(para)
        if not cited:
            bad.append(f"line {n}: a Checked by paragraph that cites no test")
        bad += [f"line {n}: {why}" for name, target in cited if (why := link_problems(page, name, target))]
    assert not bad, f"{page.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_no_page_cites_a_by_construction_test():
    bad = [f"{page.relative_to(ROOT)}:{n}: {name}" for page in sorted(DOCS.rglob("*.md"))
           for n, para in checked_by_paragraphs(page.read_text(encoding="utf-8"))
           for name, _ in LINK.findall(para) if name in BY_CONSTRUCTION]
    assert not bad, "pages cite tests that hold by construction:\n" + "\n".join(bad)


def test_the_rule_itself_can_fail(tmp_path):
    """The checker on a scratch page and test file: each kind of dishonest link is caught."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_x.py").write_text(
        "import cvxpy as cp\n"
        "def _helper():\n    return as_written(1)\n"
        "def test_honest():\n    assert _helper()\n"
        "def test_plain():\n    cp.Problem(cp.Minimize(0)).solve()\n"
        "def test_by_reference_only():\n    assert F.solve(f.primal()).objective == -F.solve(f.dual()).objective\n"
        "def test_sfm_soft_threshold_minimises_L_i():\n    assert 1\n",
        encoding="utf-8")
    page = tmp_path / "docs" / "p.md"
    page.parent.mkdir()
    assert link_problems(page, "test_honest", "../tests/test_x.py") is None       # through a helper
    assert link_problems(page, "test_plain", "../tests/test_x.py") is None
    assert "solves nothing" in link_problems(page, "test_by_reference_only", "../tests/test_x.py")
    assert "no test_missing" in link_problems(page, "test_missing", "../tests/test_x.py")
    assert "by construction" in link_problems(page, "test_rls_equals_cvxpy_functional", "../tests/test_x.py")
    assert "has none" in link_problems(page, "test_sfm_soft_threshold_minimises_L_i", "../tests/test_x.py")
    text = "## 1\n\n$$\nx = 1\n$$\n\nChecked by: [test_honest](t.py).\n\n$$\ny = 2\n$$\n\n## 2\n\nChecked by: x\n"
    assert unchecked_displays(text) == [9]  # the second block's check sits under another heading
    assert [n for n, _ in checked_by_paragraphs(text)] == [7, 15]

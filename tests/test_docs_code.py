"""The code on the derivation pages runs, and prints what the page says it prints.

Every page of ``docs/formulations/`` and ``docs/worked_example.md`` carries, in an "In code" section, fenced
blocks tagged ``pycon``: doctest sessions that build the page's primal and dual with :mod:`svmref.formulations`,
solve them, and print the page's numbers (rounded to the certified accuracy of the reference, so that the output
does not depend on the last bits). Each page is one test: its blocks run in order, in one namespace, with the
standard library's :mod:`doctest` (``NORMALIZE_WHITESPACE | ELLIPSIS``); a failure names the page, the line of the
example in the page, what it expected and what it got. Every one of these pages must keep at least one block.

The blocks are also read by the notebook generator, which extracts the same fences: keep them self-contained
(every import and every datum inside the page's blocks) and in this format.
"""
from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: A fenced block tagged pycon: the fence alone on its line, the session up to the closing fence.
FENCE = re.compile(r"^```pycon[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def pages() -> list[Path]:
    """The derivation pages that must carry code: every formulation page and the worked example."""
    return sorted((DOCS / "formulations").glob("*.md")) + [DOCS / "worked_example.md"]


def blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the block's first line, block text) of every ``pycon`` block of a page."""
    return [(text.count("\n", 0, m.start("body")) + 1, m.group("body")) for m in FENCE.finditer(text)]


def page_doctest(name: str, text: str) -> doctest.DocTest:
    """The page's blocks as one doctest, each example's ``lineno`` the 0-based line of the page it sits on."""
    parser = doctest.DocTestParser()
    examples = []
    for first, body in blocks(text):
        for ex in parser.get_examples(body, name):
            ex.lineno += first - 1
            examples.append(ex)
    return doctest.DocTest(examples, globs={}, name=name, filename=name, lineno=0, docstring=text)


def run_page(name: str, text: str) -> tuple[int, str]:
    """Run a page's blocks; (number of failures, doctest's report of them, page and line named)."""
    test = page_doctest(name, text)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS, verbose=False)
    try:
        runner.run(test, out=report.append, clear_globs=True)
    finally:
        test.globs.clear()
    return runner.failures, "".join(report)


def test_the_fence_and_the_runner_can_fail():
    """A scratch page: the fence is found, a right number passes, a wrong one fails, named by page and line."""
    page = "# p\n\ntext\n\n```pycon\n>>> x = 0.5\n>>> round(x * 3, 6)\n1.5\n```\n\n```python\n>>> 1\n2\n```\n"
    assert [n for n, _ in blocks(page)] == [6]          # the python block is not a doctest block
    assert run_page("scratch.md", page) == (0, "")
    failures, report = run_page("scratch.md", page.replace("\n1.5\n", "\n1.6\n"))
    assert failures == 1
    assert 'File "scratch.md", line 7' in report and "Expected:\n    1.6\nGot:\n    1.5" in report
    failures, report = run_page("scratch.md", page.replace("x * 3", "x * undefined"))
    assert failures == 1 and "NameError" in report


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_page_has_code(page):
    """Every derivation page keeps at least one pycon block (a page cannot lose its code)."""
    found = blocks(page.read_text(encoding="utf-8"))
    assert found, f"{page.relative_to(ROOT)} has no ```pycon block (its 'In code' section)"
    assert all(">>> " in body for _, body in found), f"{page.relative_to(ROOT)}: a pycon block with no >>> prompt"


@pytest.mark.numerics  # the pages print solver labels and check tolerances down to 1e-9: rerun on other FP paths
@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_page_code_runs_and_prints_the_page_numbers(page):
    """The page's pycon blocks, run with doctest, print what the page says."""
    rel = page.relative_to(ROOT).as_posix()
    failures, report = run_page(rel, page.read_text(encoding="utf-8"))
    assert failures == 0, f"{rel}: {failures} example(s) of its In code section failed:\n{report}"

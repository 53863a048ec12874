"""Generate the teaching notebooks: one per formulation page and one for the worked example.

``python docs/notebooks/build.py`` (re)writes, for every page ``docs/formulations/<page>.md`` and for
``docs/worked_example.md``:

* ``docs/notebooks/<page>.ipynb``, the student version: the page, then exercises whose answers are stubs
  (a markdown cell to write a derivation or a prediction in, code cells ``# your code here`` /
  ``raise NotImplementedError``);
* ``docs/notebooks/teacher/<page>.ipynb``, the teacher version: the same cells with the answers filled in.

The cells, in order: a title cell linking back to the page; the page's prose and maths as markdown cells, one per
``##`` section (its ``# `` title moves to the title cell; links are rewritten to be relative to the notebook, so that
they resolve in the repository and, through ``docs/notebooks/site_hooks.py``, on the site); each fenced block of the
page whose info string is ``pycon`` as code cells (prompts stripped, expected output dropped, a cell closed after each
example that shows output; an example whose expected output is a traceback runs inside ``try``/``except``; ``+SKIP``
examples are left out); if the page has no ``pycon`` block, the ``python fallback`` block of its exercise file, which
builds and solves the page's primal and dual; then the exercises of ``docs/notebooks/exercises/<page>.md``.

An exercise file is Markdown: a ``# `` title, prose (the introduction of the Exercises part), and one
``## Exercise N (kind): title`` section per exercise, kind ``derive``, ``predict`` or ``break``, at least three with
every kind. Its fenced blocks carry a role in their info string: ``python`` or ``python setup`` (a code cell in both
versions), ``python solution`` (teacher: the code; student: a stub, or the ``python student`` block just before it),
``markdown answer`` (teacher: the answer; student: an empty answer cell), ``python fallback`` (see above).

Why nbformat and not jupytext: the notebooks are assembled from two sources by rules of our own (sections, pycon
conversion, the student/teacher split), so what jupytext offers, a text format read as a notebook, would be one more
format to generate first, with its own rules for where a cell ends. nbformat is the format's reference
implementation: ``nbformat.v4`` builds the cells, ``nbformat.validate`` checks them against the schema, and
``nbformat.writes`` serialises them as Jupyter does (sorted keys, one-space indent), so that a notebook saved from
Jupyter diffs minimally. Cell ids are derived from the page and the cell's position, and nothing else varies:
regenerating is deterministic, which ``tests/test_notebooks.py`` checks against the committed notebooks.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import v4

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
ROOT = DOCS.parent
EXERCISES = HERE / "exercises"
#: The kinds of exercise, each notebook has at least one of each.
KINDS = ("derive", "predict", "break")
HEADING = re.compile(r"^## Exercise (\d+) \((derive|predict|break)\): (.+)$")
FENCE = re.compile(r"^```([A-Za-z]*)[ \t]*([A-Za-z]*)[ \t]*$")
LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)(\))")
STUB = "# your code here\nraise NotImplementedError"
ANSWER_STUB = "**Your answer.** *Write it here (double-click to edit).*"
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}


def pages() -> list[Path]:
    """The pages that get a notebook: every formulation page, then the worked example."""
    return sorted((DOCS / "formulations").glob("*.md")) + [DOCS / "worked_example.md"]


# --------------------------------------------------------------------------------------------------
# the page: markdown sections and pycon blocks
# --------------------------------------------------------------------------------------------------
def rewrite_links(text: str, src_dir: Path, dst_dir: Path = HERE) -> str:
    """Every relative link or image of ``text`` (written in ``src_dir``) made relative to ``dst_dir``."""
    def repl(m):
        target = m.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return m.group(0)
        path, _, frag = target.partition("#")
        new = Path(os.path.relpath((src_dir / path).resolve(), dst_dir)).as_posix()
        return f"{m.group(1)}{new}{'#' + frag if frag else ''}{m.group(3)}"

    return LINK.sub(repl, text)


def split_fences(text: str, role_of) -> list[tuple[str, str]]:
    """``text`` as (role, body) pieces: ``role_of(lang, tag)`` names a fenced block's role, or None to keep
    the block in the surrounding markdown (role ``"md"``)."""
    out, prose, block, role = [], [], [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if role is None and m and m.group(1) and role_of(m.group(1), m.group(2)):
            out.append(("md", "\n".join(prose)))
            prose, role = [], role_of(m.group(1), m.group(2))
        elif role is not None and line.strip() == "```":
            out.append((role, "\n".join(block)))
            block, role = [], None
        elif role is not None:
            block.append(line)
        else:
            prose.append(line)
    if role is not None:
        raise ValueError(f"a ```{role} block is never closed")
    out.append(("md", "\n".join(prose)))
    return [(r, b) for r, b in out if r != "md" or b.strip()]


def _examples(block: str) -> list[tuple[list[str], list[str]]]:
    """(source lines, expected output lines) of each doctest example of a pycon block."""
    examples = []
    for line in block.splitlines():
        if line.startswith(">>>"):
            examples.append(([line[4:]], []))
        elif line.startswith("...") and examples and not examples[-1][1]:
            examples[-1][0].append(line[4:])
        elif examples and line.strip():
            examples[-1][1].append(line)
    return examples


def pycon_cells(block: str) -> list[str]:
    """A pycon block as the sources of code cells: one cell ends after each example that shows output."""
    cells, current = [], []
    for source, output in _examples(block):
        if "+SKIP" in source[0]:
            continue
        source = [re.sub(r"\s*#\s*doctest:.*$", "", s) for s in source]
        if output and output[0].startswith("Traceback (most recent call last)"):
            source = ["try:", *("    " + s for s in source), "except Exception as exc:  # the page shows this error",
                      "    print(f'{type(exc).__name__}: {exc}')"]
        current += source
        if output:
            cells.append("\n".join(current).strip("\n"))
            current = []
    if current:
        cells.append("\n".join(current).strip("\n"))
    return [c for c in cells if c]


def page_sections(text: str) -> list[str]:
    """The markdown of a page, without its ``# `` title, cut before every ``## `` heading outside code."""
    parts, fence = [[]], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            parts.append([])
        parts[-1].append(line)
    return [s for s in ("\n".join(p).strip("\n") for p in parts) if s]


def title_of(text: str) -> str:
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


# --------------------------------------------------------------------------------------------------
# the exercise file
# --------------------------------------------------------------------------------------------------
@dataclass
class Exercises:
    """The parsed exercise file: its cells as (role, body), the fallback code, the exercises' kinds."""

    cells: list[tuple[str, str]] = field(default_factory=list)
    fallback: str = ""
    kinds: list[str] = field(default_factory=list)


EXERCISE_ROLES = {("python", ""): "code", ("python", "setup"): "code", ("python", "solution"): "solution",
                  ("python", "student"): "student", ("python", "fallback"): "fallback",
                  ("markdown", "answer"): "answer"}


def read_exercises(path: Path) -> Exercises:
    """Parse ``docs/notebooks/exercises/<page>.md`` (the format is in the module docstring)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ValueError(f"{path}: the first line must be the '# ' title")
    ex = Exercises()
    pieces = split_fences("\n".join(lines[1:]), lambda lang, tag: EXERCISE_ROLES.get((lang, tag)))
    for role, body in pieces:
        if role == "fallback":
            ex.fallback = body
        elif role == "md":
            for chunk in re.split(r"(?m)^(?=## Exercise )", body):
                if chunk.strip():
                    ex.cells.append(("md", rewrite_links(chunk.strip("\n"), path.parent)))
        else:
            ex.cells.append((role, body.strip("\n")))
    ex.kinds = [m.group(2) for line in lines if (m := HEADING.match(line))]
    if len(ex.kinds) < 3 or set(ex.kinds) != set(KINDS):
        raise ValueError(f"{path}: at least three exercises, of the kinds {KINDS}; found {ex.kinds}")
    if any("$" in m.group(3) for line in lines if (m := HEADING.match(line))):
        raise ValueError(f"{path}: no maths in an exercise's title (the site's table of contents shows it raw)")
    numbers = [int(m.group(1)) for line in lines if (m := HEADING.match(line))]
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError(f"{path}: exercises must be numbered 1, 2, ... in order, found {numbers}")
    for (role, body), nxt in zip(ex.cells, ex.cells[1:] + [("", "")]):
        if role == "student" and (nxt[0] != "solution" or "raise NotImplementedError" not in body):
            raise ValueError(f"{path}: a ```python student block must raise NotImplementedError and precede a solution")
    return ex


# --------------------------------------------------------------------------------------------------
# the notebook
# --------------------------------------------------------------------------------------------------
def _exercise_cells(ex: Exercises, teacher: bool) -> list[tuple[str, str, list[str]]]:
    """(cell type, source, tags) of the Exercises part."""
    out = [("markdown", "## Exercises", [])]
    for k, (role, body) in enumerate(ex.cells):
        if role == "md":
            out.append(("markdown", re.sub(r"(?m)^## Exercise ", "### Exercise ", body), []))
        elif role == "code":
            out.append(("code", body, []))
        elif role == "answer":
            out.append(("markdown", "**Answer.** " + body, ["solution"]) if teacher else ("markdown", ANSWER_STUB, ["answer"]))
        elif role == "solution" and teacher:
            out.append(("code", body, ["solution"]))
        elif role == "solution":
            prev = ex.cells[k - 1] if k else ("", "")
            out.append(("code", prev[1] if prev[0] == "student" else STUB, ["exercise-stub"]))
    return out


def _page_cells(page: Path, ex: Exercises) -> list[tuple[str, str, list[str]]]:
    """(cell type, source, tags) of the page part: its sections, its pycon blocks (or the fallback code)."""
    text = page.read_text(encoding="utf-8")
    body = re.sub(r"(?m)\A(?:\s*\n)*# .*\n?", "", text, count=1)  # the title moves to the title cell
    out, n_code = [], 0
    for section in page_sections(body):
        for role, piece in split_fences(section, lambda lang, tag: "pycon" if lang == "pycon" else None):
            if role == "pycon":
                cells = pycon_cells(piece)
                out += [("code", c, []) for c in cells]
                n_code += len(cells)
            else:
                out.append(("markdown", rewrite_links(piece.strip("\n"), page.parent), []))
    if not n_code:
        if not ex.fallback:
            raise ValueError(f"{page.name} has no ```pycon block and its exercise file no ```python fallback block")
        out += [("markdown", "## In code\n\nThe page's primal and dual, built and solved with `svmref.formulations`.", []),
                ("code", ex.fallback.strip("\n"), [])]
    return out


def build(page: Path, teacher: bool) -> nbformat.NotebookNode:
    """The notebook of ``page``, student or teacher version."""
    page = page.resolve()
    stem, rel = page.stem, page.relative_to(DOCS).as_posix()
    ex = read_exercises(EXERCISES / f"{stem}.md")
    title = title_of(page.read_text(encoding="utf-8"))
    link = Path(os.path.relpath(page, HERE)).as_posix()
    version = ("**teacher version**, with the answers filled in" if teacher else
               "**student version**: the cells marked `# your code here` and the answer cells are yours "
               f"(download it: [{stem}.ipynb]({stem}.ipynb))")
    intro = (f"# {title}\n\nThe notebook of the page [{title}]({link}), {version}. The page's derivation comes first, "
             "then its code, then the exercises; run the cells in order.\n\n"
             f"*Generated by `docs/notebooks/build.py` from the page and `docs/notebooks/exercises/{stem}.md`: "
             "edit those, not this file.*")
    cells = [("markdown", intro, [])] + _page_cells(page, ex) + _exercise_cells(ex, teacher)
    nb = v4.new_notebook(metadata={"kernelspec": KERNEL, "language_info": {"name": "python"},
                                   "svmref": {"page": rel, "version": "teacher" if teacher else "student",
                                              "exercises": ex.kinds}})
    for k, (kind, source, tags) in enumerate(cells):
        meta = {"tags": tags} if tags else {}
        make = v4.new_markdown_cell if kind == "markdown" else v4.new_code_cell
        nb.cells.append(make(source, id=f"{stem[:40]}-{k:03d}", metadata=meta))
    nbformat.validate(nb)
    return nb


def write_all(out: Path = HERE) -> list[Path]:
    """Write every notebook under ``out`` (``<page>.ipynb`` and ``teacher/<page>.ipynb``); the paths written."""
    written = []
    for page in pages():
        for teacher in (False, True):
            path = out / ("teacher" if teacher else "") / f"{page.stem}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            text = nbformat.writes(build(page, teacher))
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write into (default: docs/notebooks)")
    args = parser.parse_args(argv)
    for path in write_all(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""MkDocs hooks for the notebooks of ``docs/notebooks/`` (``mkdocs.yml``, next to ``docs/_site/hooks.py``).

* A page that has a notebook (``formulations/<page>.md`` or ``worked_example.md`` with ``notebooks/<page>.ipynb``)
  gets a last line linking the rendered notebook and the ``.ipynb`` to download (mkdocs-jupyter's
  ``include_source`` copies it next to the rendered page).
* A notebook page, rendered by mkdocs-jupyter (nbconvert), has its links and its maths adapted to the site:

  - the notebooks link the repository's files (``../formulations/l1_svm.md``, ``../../formulations/svm.py``), which
    is right in the repository and in Jupyter; on the site a page is its ``.html`` and a Python file is the page
    ``code/<path>.html`` that ``docs/_site/hooks.py`` generates (anchored at the function or class the link's text
    names, as that hook does);
  - nbconvert leaves ``$...$`` and ``$$...$$`` as text, while the site's MathJax (``docs/javascripts/mathjax.js``)
    typesets only what pymdownx.arithmatex marks: each formula outside code becomes the same
    ``<span class="arithmatex">\\(...\\)</span>`` (display: ``\\[...\\]``) that arithmatex writes for the pages.
"""
from __future__ import annotations

import ast
import html
import posixpath
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: Pieces of HTML left alone: code, preformatted text, scripts, styles.
PROTECTED = re.compile(r"(?s)(<(pre|code|script|style)\b.*?</\2>)")
DISPLAY = re.compile(r"(?s)(?<!\\)\$\$(.+?)(?<!\\)\$\$")
INLINE = re.compile(r"(?<![\\$])\$(?!\$)([^$\n]+?)(?<![\\$])\$(?!\$)")
HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^"#:]+)(#[^"]*)?("[^>]*>)(.*?)(?=</a>)', re.S)
OPEN, CLOSE = {True: "\\[", False: "\\("}, {True: "\\]", False: "\\)"}


def _notebook(src_uri: str) -> str | None:
    """``notebooks/<page>.ipynb`` for a page that has a notebook, else None."""
    stem = posixpath.splitext(posixpath.basename(src_uri))[0]
    if src_uri not in (f"formulations/{stem}.md", "worked_example.md"):
        return None
    return f"notebooks/{stem}.ipynb" if (HERE / f"{stem}.ipynb").is_file() else None


def on_page_markdown(markdown, page, config, files):
    nb = _notebook(page.file.src_uri)
    if nb is None:
        return markdown
    rel = posixpath.relpath(nb, posixpath.dirname(page.file.src_uri) or ".")
    return (markdown.rstrip("\n") + f"\n\nNotebook: [open it on this site]({rel}) or "
            f'<a href="{rel}" download>download the .ipynb</a> (the page with exercises; run it with svmref installed).\n')


def math_to_arithmatex(content: str) -> str:
    """``$$...$$`` and ``$...$`` outside code as pymdownx.arithmatex's generic output."""
    def wrap(m, display):
        tex = m.group(1).strip() if display else m.group(1)
        return f'<span class="arithmatex">{OPEN[display]}{tex}{CLOSE[display]}</span>'

    parts = PROTECTED.split(content)
    out = []
    for k, part in enumerate(parts):
        if k % 3 == 0:
            part = INLINE.sub(lambda m: wrap(m, False), DISPLAY.sub(lambda m: wrap(m, True), part))
        if k % 3 != 2:  # the group of the tag's name is not text
            out.append(part)
    return "".join(out)


def _anchor(path: Path, text: str) -> str:
    names = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    hit = next((p for p in html.unescape(re.sub(r"<[^>]+>", "", text)).split("::")[-1].split(".") if p in names), None)
    return f"#{hit}" if hit else ""


def site_links(content: str, page_uri: str, docs: Path, files) -> str:
    """The repository-relative links of a notebook page pointed at the site's pages."""
    here = posixpath.dirname(page_uri)

    def repl(m):
        head, target, frag, tail, text = m.group(1), m.group(2), m.group(3) or "", m.group(4), m.group(5)
        path = (docs / here / target).resolve()
        if target.endswith(".md") and path.is_relative_to(docs):
            target = target[:-3] + ".html"
        elif target.endswith(".py") and path.is_file() and path.is_relative_to(ROOT):
            code = f"code/{path.relative_to(ROOT).as_posix()}.md"
            if files.get_file_from_path(code) is not None:
                target = posixpath.relpath(code[:-3] + ".html", here or ".")
                frag = frag or _anchor(path, text)
        return f"{head}{target}{frag}{tail}{text}"

    return HREF.sub(repl, content)


def on_page_content(content, page, config, files):
    if not page.file.src_uri.endswith(".ipynb"):
        return content
    docs = Path(config["docs_dir"]).resolve()
    return site_links(math_to_arithmatex(content), page.file.src_uri, docs, files)

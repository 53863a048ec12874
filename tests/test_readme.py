"""The README's estimator examples run as written: every ```python block preceded by the marker
``<!-- readme-test -->`` is executed on its own, in a fresh namespace, from a temporary directory."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- readme-test -->"
BLOCK = re.compile(re.escape(MARKER) + r"\s*\n```python\n(.*?)\n```", re.S)


def _blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_readme_has_the_marked_examples():
    text = README.read_text(encoding="utf-8")
    blocks = _blocks()
    assert len(blocks) == text.count(MARKER) >= 2, "every marker must sit right above a ```python block"
    joined = "\n".join(blocks)
    assert "GridSearchCV(" in joined and "StandardScaler()" in joined and ("Pipeline(" in joined or "make_pipeline(" in joined)


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_example_runs(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = _blocks()[index]
    exec(compile(code, f"README.md[readme-test block {index}]", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip(), "the example prints its result"

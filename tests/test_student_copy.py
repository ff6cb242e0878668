"""The student copy (scripts/make_student_copy.py) holds no answers and runs every notebook.

The copy is written once into a temporary folder. It must hold the notebooks, the helper and
the launch files, and nothing of solutions/, teachers/, tests/ or scripts/; every relative link
in its notebooks and README must resolve inside it. That every notebook runs from it, with the
helper found in the copy itself, is tests/test_compat.py's run: it executes the notebooks from
this copy at the lowest supported versions, so the copy needs no run of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from scripts.make_student_copy import write_copy

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_NAMES = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?\)")


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "attention-math"
    write_copy(out)
    return out


def relative_links(text: str) -> list[str]:
    return [t.split("#")[0] for t in LINK.findall(text)
            if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", t, re.I)]


def test_the_copy_has_what_students_need_and_no_answers(copy):
    for needed in ["README.md", "pyproject.toml", "constraints.txt", "LICENSE", "binder/environment.yml",
                   "binder/postBuild", "lab-settings/overrides.json", "attention_helpers/__init__.py",
                   "notebooks/cheat_sheet.ipynb"]:
        assert (copy / needed).is_file(), needed
    assert sorted(p.name for p in (copy / "notebooks").glob("*.ipynb")) == NOTEBOOK_NAMES
    for never in ["solutions", "teachers", "tests", "scripts"]:
        assert not (copy / never).exists(), never
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in copy.rglob("*")
                     if p.is_file() and p.suffix in (".md", ".ipynb", ".py", ".toml", ".yml"))
    assert "BEGIN SOLUTION" not in text and "Model answers" not in text


def test_every_relative_link_resolves_inside_the_copy(copy):
    broken = []
    for path in [copy / "README.md", *(copy / "notebooks").glob("*.ipynb"), copy / "notebooks" / "README.md"]:
        if path.suffix == ".ipynb":
            text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                             if c.cell_type == "markdown")
        else:
            text = path.read_text(encoding="utf-8")
        broken += [f"{path.relative_to(copy)} -> {t}" for t in relative_links(text)
                   if not (path.parent / t).exists()]
    assert not broken, f"links that lead out of the student copy: {broken}"


def test_writing_into_a_folder_with_files_is_refused(tmp_path):
    (tmp_path / "something").write_text("x")
    with pytest.raises(ValueError, match="out must be a new or empty folder"):
        write_copy(tmp_path)

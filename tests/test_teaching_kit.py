"""The teaching kit: teachers/ apart from what students see, and links that point at files that exist.

A renamed notebook or a moved solution breaks a link silently on GitHub and on
Binder; these tests fail instead. They also check that the kit's index links
to every notebook, every note and every file of teachers/, that there is a
note for every numbered notebook, that nothing under notebooks/ holds a
lesson plan, a rubric or model answers, and that the cheat sheet's prose
states only numbers that its outputs show (the rule test_prose_numbers applies
to the notebooks).
"""

import re
from pathlib import Path

import nbformat
import pytest

from tools.prose import output_text, stated_numbers

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "teachers"
INDEX = KIT / "README.md"
STUDENTS = ROOT / "notebooks" / "README.md"
CHEAT_SHEET = ROOT / "notebooks" / "cheat_sheet.ipynb"
DOCUMENTS = [ROOT / "README.md", STUDENTS, CHEAT_SHEET, *sorted(KIT.rglob("*.md"))]

# The course's fixed notebook names, not a glob: a missing notebook must fail here too.
NOTEBOOK_NAMES = [
    "00_input_matrix", "01_qkv_projections", "02_dot_product_scores", "03_scaling_by_sqrt_dk",
    "04_softmax", "05_weighted_sum_and_self_attention", "05b_multi_head_attention", "06_kv_cache_gqa",
    "07_positions_and_rope", "08_the_decoder_block", "09_tiled_attention",  # the advanced track
    "10_attention_that_learns", "11_modern_kv_cache",
]
# What only teachers should read: none of it may appear in what students get.
TEACHERS_ONLY = re.compile(r"exit ticket|model answers?:|^#+\s*answers\b|rubric|misconception|lesson plan|"
                           r"stop and ask|\bplan\b|teacher'?s'? (guide|kit)|teachers/|solutions/",
                           re.I | re.M)

LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
BINDER_PATH = re.compile(r"urlpath=lab/tree/([^&)\s\"'>]+)")


def markdown_of(path: Path) -> str:
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


def relative_links(text: str) -> list[str]:
    """Targets of markdown links that point into the repository (no URL scheme, no bare #anchor)."""
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue
        targets.append(target.split("#")[0].split("?")[0])
    return targets


def broken_links(path: Path) -> list[str]:
    """Relative links of `path` whose file is missing, and Binder/nbgitpuller paths that are missing."""
    text = markdown_of(path)
    broken = [t for t in relative_links(text) if not (path.parent / t).exists()]
    for repo_path in BINDER_PATH.findall(text):
        # Binder opens paths from the repository root; an nbgitpuller link puts the
        # repository's name in front (<repo name>/notebooks/...).
        candidates = [ROOT / repo_path, ROOT / repo_path.split("/", 1)[-1]]
        if "<" not in repo_path and not any(c.exists() for c in candidates):
            broken.append(f"urlpath={repo_path}")
    return broken


def test_the_kit_exists():
    for name in ["README.md", "plan_90_minutes.md", "plan_half_day.md", "answers.md", "hub_admin.md",
                 "departures.md", "handing_out.md", "grading.md", "points.toml"]:
        assert (KIT / name).is_file(), f"teachers/{name} is missing"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(path):
    assert relative_links(markdown_of(path)), f"{path.relative_to(ROOT)} has no relative links at all"
    broken = broken_links(path)
    assert not broken, f"{path.relative_to(ROOT)} links to files that do not exist: {broken}"


def test_the_index_links_to_every_notebook_and_its_note():
    targets = {(INDEX.parent / t).resolve() for t in relative_links(markdown_of(INDEX))}
    missing = [name for name in NOTEBOOK_NAMES
               if (ROOT / "notebooks" / f"{name}.ipynb").resolve() not in targets
               or (KIT / "notes" / f"{name}.md").resolve() not in targets]
    assert not missing, f"teachers/README.md links to no notebook or no note for {missing}"


def test_the_index_links_to_every_file_of_the_kit():
    targets = {(INDEX.parent / t).resolve() for t in relative_links(markdown_of(INDEX))}
    files = [p for p in KIT.rglob("*") if p.is_file() and p != INDEX and p.suffix == ".md"]
    orphans = [str(p.relative_to(ROOT)) for p in files if p.resolve() not in targets]
    assert not orphans, f"files of teachers/ the index does not link: {orphans}"


def test_the_cheat_sheet_links_to_every_notebook():
    targets = {Path(t).name for t in relative_links(markdown_of(CHEAT_SHEET))}
    missing = [name for name in NOTEBOOK_NAMES if f"{name}.ipynb" not in targets]
    assert not missing, f"the cheat sheet does not link to {missing}"


def test_the_index_gives_a_binder_link_for_every_notebook():
    paths = set(BINDER_PATH.findall(INDEX.read_text(encoding="utf-8")))
    missing = [name for name in NOTEBOOK_NAMES if f"notebooks/{name}.ipynb" not in paths]
    assert not missing, f"teachers/README.md has no Binder link for {missing}"


def test_the_project_readme_links_to_the_kit():
    assert "teachers/README.md" in relative_links(markdown_of(ROOT / "README.md"))


@pytest.mark.parametrize("path", [STUDENTS, *sorted((ROOT / "notebooks").glob("*.ipynb"))],
                         ids=lambda p: p.name)
def test_nothing_students_get_holds_a_plan_or_answers(path):
    found = sorted({m.group(0).lower() for m in TEACHERS_ONLY.finditer(markdown_of(path))})
    assert not found, f"{path.relative_to(ROOT)} holds what is for teachers only: {found}"


def test_every_number_in_the_cheat_sheet_prose_is_computed_in_an_output():
    nb = nbformat.read(CHEAT_SHEET, as_version=4)
    outputs = output_text(nb)
    missing = [f"cell {k}: {number}" for k, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
               for number in stated_numbers(cell.source)
               if not re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", outputs)]
    assert not missing, f"the cheat sheet states numbers no output shows: {missing}"


def test_the_teachers_only_pattern_finds_what_it_should():
    assert TEACHERS_ONLY.search("## Exit ticket") and TEACHERS_ONLY.search("see ../solutions/nb00.py")
    assert TEACHERS_ONLY.search("[← Teacher's guide](README.md)") and TEACHERS_ONLY.search("## Answers")
    assert not TEACHERS_ONLY.search("Explain in your own words (your teacher has model answers).")


def test_the_link_checker_reports_what_is_broken(tmp_path):
    """The checker itself: a missing file, a missing Binder path and a good link."""
    page = tmp_path / "page.md"
    (tmp_path / "here.ipynb").write_text("{}")
    page.write_text(
        "[ok](here.ipynb) [ok too](here.ipynb#step-2) [web](https://example.org/x.ipynb) [top](#top)\n"
        "[gone](gone.ipynb) [![badge](https://x/b.svg)](https://mybinder.org/v2/gh/o/r/HEAD"
        "?urlpath=lab/tree/notebooks/not_there.ipynb)\n"
    )
    assert relative_links(page.read_text()) == ["here.ipynb", "here.ipynb", "gone.ipynb"]
    assert broken_links(page) == ["gone.ipynb", "urlpath=notebooks/not_there.ipynb"]


def _linked_notebooks(text: str) -> list[str]:
    """The numbered notebooks `text` links to, in order, each name once per link."""
    return [Path(target).stem for target in relative_links(text) if Path(target).stem in NOTEBOOK_NAMES]


def test_each_notebook_links_to_the_one_before_and_the_one_after_at_its_top_and_its_end():
    for k, name in enumerate(NOTEBOOK_NAMES):
        cells = [c.source for c in nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).cells
                 if c.cell_type == "markdown"]
        neighbours = NOTEBOOK_NAMES[max(k - 1, 0):k] + NOTEBOOK_NAMES[k + 1:k + 2]
        for where, cell in (("title cell", cells[0]), ("last cell", cells[-1])):
            missing = set(neighbours) - set(_linked_notebooks(cell))
            assert not missing, f"{name}: its {where} does not link to {sorted(missing)}"


def _tables(text: str) -> list[list[str]]:
    """Each markdown table of `text`, as its rows."""
    tables, rows = [], []
    for line in text.splitlines() + [""]:
        if line.lstrip().startswith("|"):
            rows.append(line)
        elif rows:
            tables.append(rows)
            rows = []
    return tables


@pytest.mark.parametrize("path", [ROOT / "README.md", STUDENTS, CHEAT_SHEET, INDEX], ids=lambda p: p.name)
def test_every_table_of_the_notebooks_lists_each_once_in_course_order(path):
    """A table that lists the notebooks (a row's first link is a numbered notebook, in three rows or
    more) lists every one of them, once, in the order of the course."""
    tables = []
    for rows in _tables(markdown_of(path)):
        firsts = [found[0] for found in map(_linked_notebooks, rows) if found]
        if len(firsts) >= 3:
            tables.append(firsts)
    assert tables, f"{path.name} has no table of the notebooks"
    for firsts in tables:
        assert firsts == NOTEBOOK_NAMES, f"{path.name}: a table lists {firsts}"

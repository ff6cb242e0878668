"""The teaching kit: teachers/ apart from what students see, and links that point at files that exist.

A renamed notebook or a moved solution breaks a link silently on GitHub and on
Binder; these tests fail instead. They also check that the kit's index links
to every notebook, every note and every file of teachers/, that there is a
note for every numbered notebook, that nothing under notebooks/ holds a
lesson plan, a rubric or model answers, and that the cheat sheet's prose
states only numbers that its outputs show (the rule test_prose_numbers applies
to the notebooks). And what goes stale without a broken link: a note's figures
of its notebook's length (tools.lesson_time's, today's), a link to a section
of a page of teachers/ whose heading moved, an exit ticket's answers and step
references, an index that names a notebook by no title of its own, and points
cited from a constant instead of teachers/points.toml.
"""

import re
from pathlib import Path

import nbformat
import pytest

from scripts import make_nbgrader_course
from tools.lesson_plans import notebook_path, sections, step_section, ticket
from tools.lesson_time import PER_CHECK, lesson_time
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


# ---- what a note says of its notebook's length: tools.lesson_time's figures, today's ------------------

LESSON_TIME = re.compile(
    r"By the course's model \(`python -m tools\.lesson_time`\): (?P<words>\d+) words of prose, "
    r"(?P<code_cells>\d+) code cells, (?P<panels>\d+) panels?, (?P<checks>\d+) checks?, "
    r"about (?P<minutes>\d+(?:\.\d)?) minutes"
    r"(?:, (?P<lesson>\d+) of lesson and (?P<exercises>\d+) of exercises)?")


def lesson_time_errors(text: str, path: Path) -> list[str]:
    """Where `text` (a note) states the model's figures for the notebook `path` and they differ
    from what tools.lesson_time computes today; a mention of the tool in another form counts too."""
    flat = " ".join(text.split())
    stated = list(LESSON_TIME.finditer(flat))
    errors = [] if len(stated) == flat.count("tools.lesson_time") else [
        "a statement of the model's figures that is not in the usual form"]
    t = lesson_time(path)
    today = {"words": t.words, "code_cells": t.code_cells, "panels": t.panels, "checks": t.checks,
             "minutes": f"{t.minutes:.1f}", "lesson": round(t.minutes - PER_CHECK * t.checks),
             "exercises": PER_CHECK * t.checks}
    for match in stated:
        for key, value in match.groupdict().items():
            if value is not None and value != str(today[key]):
                errors.append(f"{key}: says {value}, the model gives {today[key]}")
    return errors


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_a_note_s_lesson_time_figures_are_the_model_s_today(name):
    note = (KIT / "notes" / f"{name}.md").read_text(encoding="utf-8")
    errors = lesson_time_errors(note, ROOT / "notebooks" / f"{name}.ipynb")
    assert not errors, f"teachers/notes/{name}.md: run python -m tools.lesson_time: {errors}"


def test_stale_lesson_time_figures_are_found():
    path = ROOT / "notebooks" / "11_modern_kv_cache.ipynb"
    t = lesson_time(path)
    stated = (f"By the course's model (`python -m tools.lesson_time`): {t.words} words of prose, "
              f"{t.code_cells} code\ncells, 1 panel, {t.checks} checks, about {t.minutes:.1f} minutes.")
    assert lesson_time_errors(stated, path) == []
    assert lesson_time_errors(stated.replace(f"{t.words} words", f"{t.words - 11} words"), path) == [
        f"words: says {t.words - 11}, the model gives {t.words}"]
    assert lesson_time_errors("By `python -m tools.lesson_time`, 50 minutes.", path) == [
        "a statement of the model's figures that is not in the usual form"]


# ---- links to a section of a page of the kit ---------------------------------------------------------

def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation and symbols dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return "".join(ch for ch in text if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown page's headings (a repeated one gets -1, -2, … as on GitHub)."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        s = slug(heading)
        found.add(f"{s}-{seen[s]}" if s in seen else s)
        seen[s] = seen.get(s, 0) + 1
    return found


def broken_anchors(path: Path, kit: Path = KIT) -> list[str]:
    """Links of `path` to a section (#anchor) of a page of `kit` (teachers/) with no such heading."""
    broken = []
    for target in LINK.findall(markdown_of(path)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or "#" not in target:
            continue
        file, anchor = target.split("#", 1)
        page = (path.parent / file).resolve() if file else path.resolve()
        if (page.suffix == ".md" and page.is_relative_to(kit.resolve()) and page.exists()
                and anchor not in anchors(page)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_to_a_section_of_the_kit_finds_its_heading(path):
    broken = broken_anchors(path)
    assert not broken, f"{path.relative_to(ROOT)} links to sections that do not exist: {broken}"


def test_the_anchor_checker_reports_what_is_broken(tmp_path):
    assert slug("03 · Scaling by √dₖ") == "03--scaling-by-dₖ"
    assert slug("Exit ticket of the 90-minute lesson") == "exit-ticket-of-the-90-minute-lesson"
    (tmp_path / "a.md").write_text("# A page\n\n## Exit ticket\n\n## Exit ticket\n\n"
                                   "```\n# not a heading\n```\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#exit-ticket) [ok](a.md#exit-ticket-1) [gone](a.md#exit-ticket-2) "
                    "[gone](a.md#not-a-heading) [web](https://x.org/a.md#nowhere) [top](#gone-too)\n# B\n")
    assert broken_anchors(page, kit=tmp_path) == ["a.md#exit-ticket-2", "a.md#not-a-heading", "#gone-too"]


# ---- the exit tickets: each plan's answers, question by question -------------------------------------

def ticket_questions(text: str) -> list[str]:
    """The numbered questions after a plan's "## Exit ticket", without their step references."""
    return [question for question, _ in ticket(text)]


def exit_ticket_problems(plans: dict[str, str], answers: str) -> list[str]:
    """What is wrong with the plans' exit tickets against answers.md: each plan's answers link
    must name a section of answers.md holding one numbered answer per question; an answer "As
    question N above" must point to the same question of the ticket answered above it; and each
    question's step references "*(NN · Step k · heading; …)*" must name sections of those notebooks
    (tests/test_exit_tickets.py checks the headings too)."""
    problems = []
    sections_of = {slug(heading): body for heading, body in
                   re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", answers, re.M | re.S)}
    order = list(sections_of)
    links = {name: re.search(r"^Answers: \[[^\]]*\]\(answers\.md#([^)]+)\)", text, re.M)
             for name, text in plans.items()}
    answered = {link[1]: name for name, link in links.items() if link}  # a section: its plan
    for name, text in plans.items():
        link = links[name]
        if not link or link[1] not in sections_of:
            problems.append(f"{name}: its exit ticket links to no section of answers.md")
            continue
        given = re.findall(r"^(\d+)\. (.*?)(?=^\d+\. |\Z)", sections_of[link[1]], re.M | re.S)
        questions = ticket_questions(text)
        if [int(n) for n, _ in given] != list(range(1, len(questions) + 1)):
            problems.append(f"{name}: {len(questions)} questions, answers numbered {[n for n, _ in given]}")
        above = [answered[s] for s in order[:order.index(link[1])] if s in answered]
        earlier = ticket_questions(plans[above[-1]]) if above else []
        for n, answer in given:
            same = re.match(r"As question (\d+) above", answer)
            if same and not (0 < int(same[1]) <= len(earlier) and int(n) <= len(questions)
                             and earlier[int(same[1]) - 1] == questions[int(n) - 1]):
                problems.append(f"{name}: answer {n} says 'as question {same[1]} above', "
                                "which asks something else")
        for number, step, _ in (ref for _, refs in ticket(text) for ref in refs):
            notebook = notebook_path(number)
            if notebook is None or step_section(step) not in sections(nbformat.read(notebook, as_version=4)):
                problems.append(f"{name}: a question is taught in {number} · {step}, which does not exist")
    return problems


def _plans_and_answers():
    plans = {p.stem: p.read_text(encoding="utf-8") for p in sorted(KIT.glob("plan_*.md"))}
    return plans, (KIT / "answers.md").read_text(encoding="utf-8")


def test_every_exit_ticket_question_has_its_answer_and_a_step_that_exists():
    plans, answers = _plans_and_answers()
    assert len(plans) == 2
    assert exit_ticket_problems(plans, answers) == []


def test_a_wrong_exit_ticket_reference_is_found():
    plans, answers = _plans_and_answers()
    wrong = {**plans, "plan_half_day": plans["plan_half_day"].replace("*(06 · Step 4 · ", "*(06 · Step 9 · ")}
    assert exit_ticket_problems(wrong, answers) == [
        "plan_half_day: a question is taught in 06 · Step 9, which does not exist"]
    other = answers.replace("2. As question 4 above.", "2. As question 3 above.")
    assert exit_ticket_problems(plans, other) == [
        "plan_half_day: answer 2 says 'as question 3 above', which asks something else"]
    moved = {**plans, "plan_90_minutes": plans["plan_90_minutes"].replace("#exit-ticket-of-the-90", "#t-90")}
    assert exit_ticket_problems(moved, answers)[0] == (
        "plan_90_minutes: its exit ticket links to no section of answers.md")
    heading = "## Exit ticket of the half-day workshop\n"
    extra = answers.replace(heading, heading + "\n5. An answer to no question.\n", 1)
    assert "plan_half_day: 4 questions" in exit_ticket_problems(plans, extra)[0]


# ---- what each index calls a notebook: one of its titles ---------------------------------------------

def names_of(name: str) -> list[str]:
    """A notebook's titles: its own (its first line, after "NN · ") and its note's ("NN · …: notes")."""
    own = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).cells[0].source.splitlines()[0]
    note = (KIT / "notes" / f"{name}.md").read_text(encoding="utf-8").splitlines()[0]
    return [own.lstrip("# ").split(" · ", 1)[1].strip(),
            note.lstrip("# ").split(" · ", 1)[1].removesuffix(": notes")]


def calls_it_by_its_title(text: str, name: str) -> bool:
    """`text` is one of the notebook's titles, or its start (at a word's end; a leading "The" may go)."""
    def plain(s):
        s = re.sub(r"\*\(advanced\)\*|^\d\d\w? ", "", s).strip()
        return re.sub(r"^the ", "", s, flags=re.I).lower()
    return any(re.match(re.escape(plain(text)) + r"\b", plain(title)) for title in names_of(name))


def misnamed(path: Path) -> list[str]:
    """Links in the tables of `path` (and in teachers/README.md's list of notes) whose text calls
    the notebook by no title of its own."""
    found = []
    for line in markdown_of(path).splitlines():
        for text, target in re.findall(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)", line):
            stem = Path(target).stem
            if stem not in NOTEBOOK_NAMES or target.startswith("http"):
                continue
            if (line.lstrip().startswith("|") and target.endswith(".ipynb")
                    and not calls_it_by_its_title(text, stem)):
                found.append(f"{text!r} for {stem}")
            if (line.startswith("- [") and target.endswith(f"notes/{stem}.md")
                    and text.split(" · ", 1)[-1] != names_of(stem)[1]):
                found.append(f"{text!r} for the note of {stem}")
    return found


@pytest.mark.parametrize("path", [ROOT / "README.md", STUDENTS, CHEAT_SHEET, INDEX],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_index_calls_each_notebook_by_its_title(path):
    assert not misnamed(path), f"{path.name} names notebooks by no title of theirs: {misnamed(path)}"


def test_the_answers_call_each_notebook_by_its_note_s_title():
    headings = {}
    answers = (KIT / "answers.md").read_text(encoding="utf-8")
    for number, title in re.findall(r"^### (\d\d\w?) · (.+?)$", answers, re.M):
        headings.setdefault(number, title)  # the first of each number: its written question
    for name in NOTEBOOK_NAMES:
        assert headings[name.split("_")[0]] == names_of(name)[1], name


def test_a_title_that_is_no_title_is_found(tmp_path):
    page = tmp_path / "README.md"
    page.write_text("| # | notebook |\n|---|---|\n"
                    "| 05b | [Multi-head attention](notebooks/05b_multi_head_attention.ipynb) |\n"
                    "| 00 | [Input matrix X](notebooks/00_input_matrix.ipynb) |\n"
                    "| 11 | [Modern KV caches](notebooks/11_modern_kv_cache.ipynb) *(advanced)* |\n\n"
                    "- [11 · Modern KV caches](notes/11_modern_kv_cache.md)\n")
    assert misnamed(page) == ["'Modern KV caches' for 11_modern_kv_cache",
                              "'11 · Modern KV caches' for the note of 11_modern_kv_cache"]


def test_the_kit_takes_points_from_points_toml_not_from_a_constant():
    """The nbgrader course reads each check's points from teachers/points.toml; a page that cites a
    constant of scripts/make_nbgrader_course.py (`POINTS = 1`, as a note once did) has gone stale."""
    stale = [f"{p.relative_to(ROOT)}: {m[0]}" for p in sorted(KIT.rglob("*.md"))
             for m in re.finditer(r"\b([A-Z][A-Z_]+)\s*=\s*\S+", p.read_text(encoding="utf-8"))
             if "POINT" in m[1] and not hasattr(make_nbgrader_course, m[1])]
    assert not stale, f"points are in teachers/points.toml, not in a constant: {stale}"

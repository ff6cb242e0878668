"""teachers/answers.md carries every coded exercise's answer, written from solutions/
(scripts/write_answers.py) and up to date with them, and every notebook's written question
("In your own words") with its model answer and its rubric, laid out alike for all of them;
the notes link there instead of keeping answers of their own."""

import re

import nbformat

from scripts import write_answers
from scripts.make_nbgrader_course import ROOT, WRITTEN, exercises, load_points
from tools.notebooks import NOTEBOOKS


def test_answers_md_is_what_the_solutions_write():
    text = write_answers.ANSWERS.read_text(encoding="utf-8")
    assert write_answers.written(text) == text, "run python -m scripts.write_answers"


def test_every_exercise_with_an_answer_cell_has_its_answer_there(exercise_notebooks):
    text = write_answers.ANSWERS.read_text(encoding="utf-8")
    listed = write_answers.coded_answers()
    cells = sum(answer is not None for path in exercise_notebooks
                for answer, _, _ in exercises(nbformat.read(path, as_version=4)))
    assert len(listed) == cells >= 30
    section = text[text.index(write_answers.BEGIN):text.index(write_answers.END)]
    for answer in listed:
        assert f"`ah.checks.{answer['checker']}`" in section
        assert answer["code"].strip() and answer["code"] in section


def test_a_stale_answer_is_found(tmp_path, monkeypatch):
    stale = write_answers.ANSWERS.read_text(encoding="utf-8").replace("def my_rope(", "def old_rope(")
    path = tmp_path / "answers.md"
    path.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(write_answers, "ANSWERS", path)
    assert write_answers.main(["--check"]) == 1
    assert write_answers.main([]) == 0 and write_answers.main(["--check"]) == 0


# ---- the written questions: one entry per notebook, in answers.md itself -------------------------

WRITTEN_SECTION = "## Written questions and stretch tasks"
RUBRIC = re.compile(r"^\*\*Rubric \((\d+) points?, graded by hand\):\*\*(.+)$", re.M)


def written_entries(text: str) -> dict[str, str]:
    """{notebook number: its entry} of answers.md's written-questions section."""
    section = text[text.index(WRITTEN_SECTION):]
    section = section[:section.index("\n## ", 1)]
    parts = re.split(r"^### (\d\d\w?) · .*$", section, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def entry_problems(entry: str, nb, written_points) -> list[str]:
    """What an entry lacks, against its notebook's "In your own words" cell and its points."""
    cell = next(c.source for c in nb.cells if c.cell_type == "markdown" and WRITTEN.search(c.source))
    problems = []
    question = re.match(r"\s*\*In words: (.+?)\*\n(.+?)\n\n", entry, re.S)
    if not question or not question[2].strip():
        problems.append("no question (*In words: …*) followed by its model answer")
    rubrics = RUBRIC.findall(entry)
    if len(rubrics) != 1:
        problems.append(f"{len(rubrics)} rubrics instead of one")
    else:
        points, criteria = rubrics[0]
        parts = sum(int(p) for p in re.findall(r"\((\d+)\)", criteria))
        if int(points) != written_points or parts != written_points:
            problems.append(f"a rubric of {points} points in parts of {parts} in all; "
                            f"teachers/points.toml gives {written_points}")
    if ("**Stretch.**" in cell) != ("*Stretch:" in entry):
        problems.append("a stretch task in one of the notebook and answers.md but not the other")
    return problems


def written_problems(text: str) -> dict[str, list[str]]:
    """{notebook: problems} for every numbered notebook with a written question."""
    entries, points, found = written_entries(text), load_points(), {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        if not any(c.cell_type == "markdown" and WRITTEN.search(c.source) for c in nb.cells):
            continue
        number = path.stem.split("_")[0]
        if number not in entries:
            found[path.stem] = [f"no entry ### {number} · … under {WRITTEN_SECTION!r}"]
        elif problems := entry_problems(entries[number], nb, points[path.stem]["written"]):
            found[path.stem] = problems
    return found


def test_every_written_question_has_its_model_answer_and_rubric_in_answers_md():
    """Each notebook's "In your own words" has its entry in answers.md, laid out alike: the
    question, the model answer, a rubric worth the points of teachers/points.toml (its parts
    adding up to them) and the stretch task's answer where the notebook sets one."""
    text = write_answers.ANSWERS.read_text(encoding="utf-8")
    assert len(written_entries(text)) >= 13
    assert written_problems(text) == {}


def test_a_missing_or_deferred_entry_is_found():
    text = write_answers.ANSWERS.read_text(encoding="utf-8")
    entries = written_entries(text)
    deferred = text.replace(entries["11"], "\nThe model answer and its rubric are in the notes for 11.\n\n")
    assert list(written_problems(deferred)) == ["11_modern_kv_cache"]
    gone = text.replace("### 10 · Attention that learns" + entries["10"], "")
    assert written_problems(gone) == {"10_attention_that_learns": ["no entry ### 10 · … under "
                                                                   f"{WRITTEN_SECTION!r}"]}
    three = text.replace("**Rubric (2 points, graded by hand):** Weights that sum",
                         "**Rubric (3 points, graded by hand):** Weights that sum")
    assert "a rubric of 3 points" in written_problems(three)["11_modern_kv_cache"][0]


def test_the_notes_link_to_answers_md_and_hold_no_rubric_of_their_own():
    """Each note's top links to its notebook's entry (GitHub's anchor of the heading: lower case,
    punctuation and symbols dropped, spaces to hyphens); the answers are not in the note."""
    text = write_answers.ANSWERS.read_text(encoding="utf-8")
    section = text[text.index(WRITTEN_SECTION):text.index(write_answers.BEGIN)]
    anchors = {}
    for heading, number in re.findall(r"^### ((\d\d\w?) · .*)$", section, re.M):
        kept = "".join(ch for ch in heading.lower() if ch.isalnum() or ch in "-_ ")
        anchors[number] = kept.replace(" ", "-")
    for path in NOTEBOOKS:
        number = path.stem.split("_")[0]
        note = (ROOT / "teachers" / "notes" / f"{path.stem}.md").read_text(encoding="utf-8")
        assert "Rubric" not in note and not re.search(r"^#+\s*Answers", note, re.M), (
            f"teachers/notes/{path.stem}.md keeps answers of its own: they belong in answers.md")
        assert f"[Answers](../answers.md#{anchors[number]})" in note.split("\n\n")[1], (
            f"the note of {path.stem} does not link to its entry in answers.md at its top")

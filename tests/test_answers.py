"""teachers/answers.md carries every coded exercise's answer, written from solutions/
(scripts/write_answers.py) and up to date with them."""

import nbformat

from scripts import write_answers
from scripts.make_nbgrader_course import exercises


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

"""The teacher's own nbgrader settings survive regenerating the course (markers `grading`, `slow`,
except the first test, which needs no nbgrader).

teachers/grading.md tells teachers to put their settings in course/teacher_config.py, which the
generated nbgrader_config.py loads and scripts/make_nbgrader_course.py never writes. Here the
teacher's file is grading.md's own block (the late penalty "zero" and zip_collect's file names);
the course is regenerated over it, and real nbgrader shows both in force: zip_collect files the
hand-ins of a learning platform's ZIP (browser-renamed downloads too) under the right students,
and autograde gives the late one 0. The warnings grading.md calls expected are looked for in
nbgrader's logs.
"""

from __future__ import annotations

import csv
import re
import zipfile
from types import SimpleNamespace

import pytest

from scripts import make_nbgrader_course as COURSE_MAKER
from tools.grading import fill_answers, grading_env, nbgrader, reference_answers
from tools.notebooks import ROOT

GUIDE = (ROOT / "teachers" / "grading.md").read_text()
PROSE = " ".join(GUIDE.split())  # its words, whatever the line breaks
ASSIGNMENT = "02_dot_product_scores"
CHECKS = {k: v for k, v in COURSE_MAKER.load_points()[ASSIGNMENT].items() if k != "written"}
DUE = "2027-01-15 16:00:00 UTC"
# {file name as the learning platform gives it: (the student it is filed under or None, handed in)}
HAND_INS = {
    f"ada_{ASSIGNMENT}.ipynb": ("ada", "2027-01-15 15:59:00 UTC"),
    f"bob_{ASSIGNMENT} (1).ipynb": ("bob", "2027-01-15 16:30:00 UTC"),  # a second download, late
    f"carol_lovelace_{ASSIGNMENT}-2.ipynb": ("carol_lovelace", "2027-01-15 12:00:00 UTC"),
    "dan_03_scaling_by_sqrt_dk.ipynb": (None, None),  # another assignment's notebook: skipped
    f"dan_{ASSIGNMENT} (copy).ipynb": (None, None),  # a name the student made: skipped too
}


def teacher_config() -> str:
    """The python block after grading.md's <!-- teacher-config --> marker."""
    return re.search(r"<!-- teacher-config -->\n```python\n(.*?)```", GUIDE, re.S)[1]


def documented_regexp() -> str:
    return re.search(r'named_regexp = r"(.*)"', teacher_config())[1]


# {a file's name in the learning platform's ZIP: (student, notebook)}, more than HAND_INS has
NAMES = {**{name: (student, ASSIGNMENT) for name, (student, _) in HAND_INS.items() if student},
         f"ada_{ASSIGNMENT} (2) (1).ipynb": ("ada", ASSIGNMENT),
         f"ada_{ASSIGNMENT} 2.ipynb": ("ada", ASSIGNMENT),
         f"ada_2024_{ASSIGNMENT}.ipynb": ("ada_2024", ASSIGNMENT),
         "eve_05b_multi_head_attention (3).ipynb": ("eve", "05b_multi_head_attention"),
         "dan_03_scaling_by_sqrt_dk.ipynb": ("dan", "03_scaling_by_sqrt_dk")}  # to be skipped by strict


def test_the_documented_file_names_give_the_student_and_the_notebook():
    # zip_collect matches the whole path under downloaded/<assignment>/extracted/; the file_id may
    # leave out .ipynb (zip_collect puts the file's extension back).
    folder = f"/home/jovyan/course/downloaded/{ASSIGNMENT}/extracted/Homework 2 (all)"
    for name, (student, notebook) in NAMES.items():
        match = re.match(documented_regexp(), f"{folder}/{name}")
        assert match, f"grading.md's named_regexp skips {name!r}"
        assert (match["student_id"], match["file_id"].removesuffix(".ipynb")) == (student, notebook), name
        assert (ROOT / "notebooks" / f"{notebook}.ipynb").exists(), notebook
    for name in [f"{ASSIGNMENT}.ipynb", f"ada_{ASSIGNMENT}.ipynb.zip", f"ada_{ASSIGNMENT}.txt",
                 "ada_notes.ipynb", f"dan_{ASSIGNMENT} (copy).ipynb"]:
        assert not re.match(documented_regexp(), f"{folder}/{name}"), name


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    env = grading_env()
    course = tmp_path_factory.mktemp("settings") / "course"
    COURSE_MAKER.write_course(course, [ROOT / "notebooks" / f"{ASSIGNMENT}.ipynb"])
    settings = course / "teacher_config.py"
    settings.write_text(teacher_config())
    COURSE_MAKER.write_course(course, [ROOT / "notebooks" / f"{ASSIGNMENT}.ipynb"])  # regenerated over it
    kept = settings.read_text()

    nbgrader(env, course, "db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}")
    nbgrader(env, course, "generate_assignment", ASSIGNMENT)
    # The learning platform's ZIP: each student's notebook with the reference answers, as they
    # downloaded it from JupyterLab and handed it in.
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    answered = course / "answered.ipynb"
    answered.write_bytes(released.read_bytes())
    fill_answers(answered, reference_answers(course, ASSIGNMENT))
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "Homework 2 - all submissions.zip", "w") as zipped:
        for name in HAND_INS:
            zipped.write(answered, name)
    collect = nbgrader(env, course, "zip_collect", ASSIGNMENT)
    filed = {p.parent.parent.name for p in course.glob(f"submitted/*/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")}
    assert filed, f"zip_collect filed nothing (are the teacher's settings loaded?):\n{collect.stderr[-3000:]}"
    for student, handed_in in HAND_INS.values():  # as grading.md says, for lateness to count
        if student in filed:
            (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").write_text(handed_in)
    autograde = nbgrader(env, course, "autograde", ASSIGNMENT)
    feedback = nbgrader(env, course, "generate_feedback", ASSIGNMENT)
    nbgrader(env, course, "export", "--to", "grades.csv")
    with open(course / "grades.csv", newline="") as f:
        grades = {row["student_id"]: row for row in csv.DictReader(f)}

    # A second download of the same student's notebook next to the first: zip_collect stops.
    with zipfile.ZipFile(archive / "late upload.zip", "w") as zipped:
        zipped.write(answered, f"ada_{ASSIGNMENT} (1).ipynb")
    with pytest.raises(RuntimeError) as twice:
        nbgrader(env, course, "zip_collect", "--force", ASSIGNMENT)
    return SimpleNamespace(kept=kept, filed=filed, grades=grades, collect=collect.stderr,
                           autograde=autograde.stderr, feedback=feedback.stderr, twice=str(twice.value))


@pytest.mark.grading
@pytest.mark.slow
def test_regenerating_the_course_leaves_the_teachers_file_alone(graded):
    assert graded.kept == teacher_config()


@pytest.mark.grading
@pytest.mark.slow
def test_the_collect_settings_are_in_force_after_regenerating(graded):
    # nbgrader has no file-name pattern of its own: without the teacher's, zip_collect files nothing
    assert graded.filed == {student for student, _ in HAND_INS.values() if student}, graded.collect[-3000:]
    assert "Skipped notebook with invalid name '03_scaling_by_sqrt_dk.ipynb'" in graded.collect  # strict
    assert "Skipped submission with no match information provided: " in graded.collect
    skipped = sum(student is None for student, _ in HAND_INS.values())
    assert f"{len(graded.filed)} files collected, {skipped} files skipped" in graded.collect
    for message in ["Skipped notebook with invalid name", "files collected, M files skipped",
                    "Skipped submission with no match information provided"]:
        assert message in PROSE, message  # grading.md tells teachers what to look for
    assert set(graded.grades) == graded.filed


@pytest.mark.grading
@pytest.mark.slow
def test_the_late_penalty_is_in_force_after_regenerating(graded):
    full = sum(CHECKS.values())
    for student, row in graded.grades.items():
        late = student == "bob"
        assert float(row["raw_score"]) == full, (student, row)
        assert float(row["late_submission_penalty"]) == (full if late else 0), (student, row)
        assert float(row["score"]) == (0 if late else full), (student, row)


@pytest.mark.grading
@pytest.mark.slow
def test_two_downloads_of_one_students_notebook_stop_zip_collect(graded):
    assert "Duplicate submission file. No timestamps for comparison" in graded.twice
    assert "Duplicate submission file. No timestamps for comparison" in PROSE


@pytest.mark.grading
@pytest.mark.slow
def test_the_warnings_grading_md_calls_expected_are_the_ones_nbgrader_gives(graded):
    changed = set(re.findall(r"Attribute 'checksum' for cell (\w+) has changed!", graded.autograde))
    assert changed == set(CHECKS), changed  # each graded check, whose hidden test was not released
    assert "Attribute 'checksum' for cell check_… has changed!" in PROSE
    assert "Config option `display_data_priority` not recognized by `ClearHiddenTests`" in graded.feedback
    assert "Config option `display_data_priority` not recognized by `ClearHiddenTests`" in PROSE
    others = [line for line in graded.autograde.splitlines() if "| WARNING]" in line
              and not re.search(r"'checksum'|> is [\d.]+ seconds late$|Late submission penalty: ", line)]
    assert not others, others  # no warning of nbgrader's own that grading.md does not explain
    assert "seconds late" in PROSE and "Late submission penalty" in PROSE

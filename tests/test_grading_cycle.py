"""The whole nbgrader cycle of teachers/grading.md, as a teacher and four students on a hub
go through it, with real nbgrader and its exchange (markers `grading`, `slow`).

The teacher imports a roster, gives assignment 02 a due date, releases it; Alice and Bob fetch
it, answer (Alice right, Bob with one typical mistake) and submit; the due date passes; Carol
submits the right answers late. The teacher collects, autogrades with late hand-ins set to
zero (in course/teacher_config.py, as grading.md says), scores the written answers (as the
Formgrader does, through nbgrader's gradebook), autogrades the late hand-in again (so that the
penalty covers its written answer), generates and releases the feedback, and exports the
grades; each student fetches their own feedback.
Dan, on the roster, hands nothing in. Every expected score comes from teachers/points.toml.

Each student runs nbgrader as in a Zero to JupyterHub pod: the operating-system user is
`jovyan` in every pod, and nbgrader takes the student's name from JUPYTERHUB_USER; each has a
home of their own. The last test shows what that means for a shared exchange: a student who
sets JUPYTERHUB_USER to a classmate's name submits in their place (teachers/hub_admin.md says
so and gives the safe set-up: no shared exchange).
"""

from __future__ import annotations

import csv
import html
import re
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from scripts import make_nbgrader_course as COURSE_MAKER
from tools.grading import BIN, fill_answers, grading_env, nbgrader, reference_answers
from tools.notebooks import ROOT

pytestmark = [pytest.mark.grading, pytest.mark.slow]

ASSIGNMENT = "02_dot_product_scores"
POINTS = COURSE_MAKER.load_points()[ASSIGNMENT]
CHECKS = {k: v for k, v in POINTS.items() if k != "written"}
ROSTER = [("alice", "Alice", "Ames"), ("bob", "Bob", "Berg"), ("carol", "Carol", "Cruz"),
          ("dan", "Dan", "Dorn")]  # Dan hands nothing in
# Bob's answer to one exercise: a typical mistake, and a piece of the hint it must get.
MISTAKE = ("check_scores", "def my_scores(Q, K):\n    return K @ Q.T", "you returned K @ Q.T")
WRITTEN = {"alice": 2, "bob": 1, "carol": 2}  # the teacher's scores for the written answer
GRADING_MD_DUEDATE = "2027-01-15 17:00:00 Europe/Berlin"  # teachers/grading.md's example
# A system-wide nbgrader config naming a shared exchange, as nbgrader's own guide sets one up.
SYSTEM_CONFIG = ('c = get_config()\nc.CourseDirectory.course_id = "attention-math"\n'
                 'c.Exchange.root = {root!r}\n')
# nbgrader in a pod of Zero to JupyterHub: the OS user is jovyan, whoever logged in.
POD = """\
import sys
import nbgrader.utils
nbgrader.utils.get_osusername = lambda: "jovyan"
from nbgrader.apps.nbgraderapp import main
sys.exit(main())
"""
READ_DUE = """\
import sys
from nbgrader.api import Gradebook
with Gradebook("sqlite:///gradebook.db") as gb:
    print(gb.find_assignment(sys.argv[1]).duedate)
"""
SET_WRITTEN = """\
import json, sys
from nbgrader.api import Gradebook
with Gradebook("sqlite:///gradebook.db") as gb:
    for student, score in json.loads(sys.argv[1]).items():
        grade = gb.find_grade("written", sys.argv[2], sys.argv[2], student)
        grade.manual_score = score
    gb.db.commit()
"""


def student_run(hub, student, *args, user=None):
    """`nbgrader ARGS` in the student's pod: their home, JUPYTERHUB_USER (their name, unless
    `user` pretends to be someone else)."""
    home = hub.homes / student
    env = {**hub.env, "HOME": str(home), "JUPYTERHUB_USER": user or student}
    result = subprocess.run([str(BIN / "python"), str(hub.base / "pod.py"), *args], cwd=home, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, f"{student}: nbgrader {' '.join(args)} failed:\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    base = tmp_path_factory.mktemp("hub")
    exchange, homes, system = base / "exchange", base / "home", base / "etc-jupyter"
    for folder in (exchange, system, *(homes / s for s, _, _ in ROSTER)):
        folder.mkdir(parents=True)
    exchange.chmod(0o777)  # as nbgrader's guide asks of a shared exchange
    (system / "nbgrader_config.py").write_text(SYSTEM_CONFIG.format(root=str(exchange)))
    (base / "pod.py").write_text(POD)
    env = {**grading_env(), "JUPYTER_CONFIG_PATH": str(system)}
    hub = SimpleNamespace(base=base, exchange=exchange, homes=homes, env=env, course=base / "course")
    course = hub.course

    # The teacher: the course, the roster, the assignment, released.
    COURSE_MAKER.write_course(course, [ROOT / "notebooks" / f"{ASSIGNMENT}.ipynb"])
    # as grading.md says, for late hand-ins: in the teacher's own file, which the generator never writes
    (course / "teacher_config.py").write_text('c.LateSubmissionPlugin.penalty_method = "zero"\n')
    (course / "roster.csv").write_text("id,first_name,last_name,email\n" + "".join(
        f"{i},{first},{last},{i}@example.org\n" for i, first, last in ROSTER))
    nbgrader(env, course, "db", "student", "import", "roster.csv")
    nbgrader(env, course, "db", "assignment", "add", ASSIGNMENT, f"--duedate={GRADING_MD_DUEDATE}")
    hub.due_read = subprocess.run([str(BIN / "python"), "-c", READ_DUE, ASSIGNMENT], cwd=course, env=env,
                                  check=True, capture_output=True, text=True).stdout.strip()
    nbgrader(env, course, "generate_assignment", ASSIGNMENT)
    nbgrader(env, course, "release_assignment", ASSIGNMENT)
    reference = reference_answers(course, ASSIGNMENT)
    hub.handed_in = {"alice": reference, "bob": {**reference, f"answer-{MISTAKE[0]}": MISTAKE[1]},
                     "carol": reference}

    # The students: fetch, answer, submit; the due date passes between Bob and Carol.
    for student, answers in hub.handed_in.items():
        if student == "carol":
            time.sleep(1.1)
            hub.due = datetime.now(timezone.utc).replace(microsecond=0)
            nbgrader(env, course, "db", "assignment", "add", ASSIGNMENT,
                     f"--duedate={hub.due:%Y-%m-%d %H:%M:%S} UTC")
            time.sleep(1.1)
        student_run(hub, student, "fetch_assignment", ASSIGNMENT)
        fill_answers(homes / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", answers)
        student_run(hub, student, "submit", ASSIGNMENT)

    # The teacher: collect, autograde, the written answers, feedback, grades.
    nbgrader(env, course, "collect", ASSIGNMENT)
    nbgrader(env, course, "autograde", ASSIGNMENT)
    subprocess.run([str(BIN / "python"), "-c", SET_WRITTEN, repr(WRITTEN).replace("'", '"'), ASSIGNMENT],
                   cwd=course, env=env, check=True, capture_output=True)
    # The penalty is worked out when autograde runs, from the points there are then: the written
    # answer's, given after, would escape it. So the late hand-ins are autograded once more.
    nbgrader(env, course, "export", "--to", "before.csv")
    nbgrader(env, course, "autograde", "--force", ASSIGNMENT, "--student=carol")
    nbgrader(env, course, "generate_feedback", ASSIGNMENT)
    nbgrader(env, course, "release_feedback", ASSIGNMENT)
    nbgrader(env, course, "export", "--to", "grades.csv")
    for student in hub.handed_in:
        student_run(hub, student, "fetch_feedback", ASSIGNMENT)
    hub.grades, hub.before = read_grades(course / "grades.csv"), read_grades(course / "before.csv")
    return hub


def read_grades(path: Path) -> dict:
    """{student: row} of a CSV file that `nbgrader export` wrote."""
    with open(path, newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_every_student_of_the_roster_is_graded_with_their_name(hub):
    assert set(hub.grades) == {s for s, _, _ in ROSTER}
    for student, first, last in ROSTER:
        row = hub.grades[student]
        assert (row["first_name"], row["last_name"], row["email"]) == (first, last, f"{student}@example.org")
        assert row["assignment"] == ASSIGNMENT
        assert float(row["max_score"]) == sum(POINTS.values())


def test_the_grades_count_the_checks_the_written_answer_and_the_late_penalty(hub):
    checks, grades = sum(CHECKS.values()), hub.grades
    expected_raw = {"alice": checks + WRITTEN["alice"],
                    "bob": checks - CHECKS[MISTAKE[0]] + WRITTEN["bob"],
                    "carol": checks + WRITTEN["carol"], "dan": 0}
    assert {s: float(row["raw_score"]) for s, row in grades.items()} == expected_raw
    assert {s: float(row["late_submission_penalty"]) for s, row in grades.items()} == {
        "alice": 0, "bob": 0, "carol": expected_raw["carol"], "dan": 0}  # "zero": late scores nothing
    assert {s: float(row["score"]) for s, row in grades.items()} == {**expected_raw, "carol": 0}
    assert grades["dan"]["timestamp"] == ""  # on the roster, nothing handed in: a row with 0
    # before Carol's hand-in was autograded again, her written answer's points escaped the penalty
    assert float(hub.before["carol"]["score"]) == WRITTEN["carol"]


def test_the_export_shows_who_was_late_against_the_due_date(hub):
    for student, row in hub.grades.items():
        if student == "dan":
            continue
        handed_in = datetime.fromisoformat(row["timestamp"]).replace(tzinfo=timezone.utc)
        assert datetime.fromisoformat(row["duedate"]).replace(tzinfo=timezone.utc) == hub.due
        assert (handed_in > hub.due) == (student == "carol"), (student, row)


def test_a_due_date_with_a_zone_name_is_read_in_that_zone(hub):
    # grading.md's example: 17:00 in Berlin in January is 16:00 UTC
    assert GRADING_MD_DUEDATE in (ROOT / "teachers" / "grading.md").read_text()
    assert hub.due_read == "2027-01-15 16:00:00"  # nbgrader keeps due dates in UTC


def test_each_student_fetches_their_own_feedback_only(hub):
    for student in hub.handed_in:
        pages = list((hub.homes / student / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
        assert len(pages) == 1, (student, pages)  # one hand-in, one page: no classmate's
        text = html.unescape(re.sub(r"<[^>]+>", " ", pages[0].read_text()))
        assert (MISTAKE[2] in text) == (student == "bob"), student
        assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text


def test_on_a_shared_exchange_a_student_can_submit_in_a_classmates_name(hub):
    # Bob sets JUPYTERHUB_USER=alice in his own pod and submits his notebook: nbgrader files it
    # as Alice's, and the next collect takes it as her latest. This is why hub_admin.md does not
    # give students a shared exchange that trusts the pod.
    notebook = hub.homes / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("written by Bob"))
    nbformat.write(nb, notebook)
    student_run(hub, "bob", "submit", ASSIGNMENT, user="alice")
    inbound = sorted(p.name for p in (hub.exchange / "attention-math" / "inbound").iterdir())
    assert sum(name.startswith(f"alice+{ASSIGNMENT}+") for name in inbound) == 2, inbound
    nbgrader(hub.env, hub.course, "collect", "--update", ASSIGNMENT)
    taken = hub.course / "submitted" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert "written by Bob" in taken.read_text()

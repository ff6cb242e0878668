"""Fixtures shared by the exercise and grading tests.

- Every test starts with grading mode off, whatever ATTENTION_GRADING says in the
  shell that runs pytest: exercise tests look at failed Check results, which
  grading mode would turn into exceptions.
- `course_maker`: scripts/make_nbgrader_course.py, the one place that
  knows how answer cells and check cells are recognised.
- `exercise_notebooks`: the numbered notebooks that hold at least one exercise.
- After a run that included browser tests, the summary names the folder of their
  screenshots (written by tests/test_browser.py), so CI can keep it.

The hooks for every item, nbval's notebooks too, are in the root's conftest.py.
"""

from __future__ import annotations

import pytest

import attention_helpers as ah
from scripts import make_nbgrader_course
from tools.notebooks import ROOT


@pytest.fixture(autouse=True)
def grading_off(monkeypatch):
    monkeypatch.delenv("ATTENTION_GRADING", raising=False)
    with ah.checks.grading(False):
        yield


COURSE_MAKER = make_nbgrader_course  # a module: the fixture below hands it out


EXERCISE_NOTEBOOKS = COURSE_MAKER.exercise_notebooks()


@pytest.fixture(scope="session")
def course_maker():
    return COURSE_MAKER


@pytest.fixture(scope="session")
def exercise_notebooks():
    return EXERCISE_NOTEBOOKS


def pytest_terminal_summary(terminalreporter):
    # Here, in the process that reports, because the tests may run in worker processes.
    # (A browser test that ran has a report of its call; one skipped for want of Chromium has not.)
    ran = any(getattr(report, "nodeid", "").startswith("tests/test_browser.py")
              and getattr(report, "when", None) == "call"
              for reports in terminalreporter.stats.values() for report in reports)
    shots = ROOT / "test-artifacts" / "screenshots"
    if ran and shots.exists():
        count = len(list(shots.glob("*.png")))
        where = shots.relative_to(ROOT)
        terminalreporter.write_line(f"browser tests: {count} screenshot{'s' * (count != 1)} in {where}/")

"""Fixtures shared by the exercise and grading tests.

- Every test starts with grading mode off, whatever ATTENTION_GRADING says in the
  shell that runs pytest: exercise tests look at failed Check results, which
  grading mode would turn into exceptions.
- `course_maker`: scripts/make_nbgrader_course.py, the one place that
  knows how answer cells and check cells are recognised.
- `exercise_notebooks`: the numbered notebooks that hold at least one exercise.
- `browser`: headless Chromium for the browser tests (skipped without it, except under CI=true).
- After a run that included browser tests, the summary names the folder of their
  screenshots (written by tests/test_browser.py), so CI can keep it.

The hooks for every item, nbval's notebooks too, are in the root's conftest.py.
"""

from __future__ import annotations

import os

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


def _missing(reason: str):
    from tools.jupyterlab_driver import HOW_TO_ENABLE

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}: {HOW_TO_ENABLE}")
    pytest.skip(f"{reason}: {HOW_TO_ENABLE}")


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (a context with a fresh profile), for the browser tests: skipped where
    there is none, a failure under CI=true."""
    from tools.jupyterlab_driver import chromium, find_chromium

    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    path = find_chromium()
    if path is None or not os.access(path, os.X_OK):
        _missing(f"no Chromium found (looked at $CHROMIUM_PATH and the PATH; got {path!r})")
    with chromium(path) as context:
        yield context


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

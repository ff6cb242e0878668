"""Hooks for every item pytest collects, nbval's cells of notebooks/ as well as tests/: here at
the root, because tests/conftest.py is not read when pytest is given only notebooks/.

- The slow items (notebooks, a browser, a hub, nbgrader) carry the marker `slow`, so the quick
  loop is `pytest -m "not slow"`; those that build an environment from the package index carry
  `index`; the newest-releases tests run only under CI=true, ATTENTION_NEWEST=1 or -m newest.
- tests/robustness.py adds, after nbval's last cell of each numbered notebook, the robustness
  run in the same kernel.
- How the two worker processes share the work (`--dist loadfile`, in order): a group runs whole
  in one worker, so its fixtures are made once there. A group is a test file or a notebook,
  except that four files are split in two halves: the two longest, the browser's and the compat
  runs (each half has its own JupyterLab or student copy); test_widgets.py, which has no
  shared fixture and would otherwise be half the quick loop on one worker; and test_newest.py,
  whose two runs (the widget tests, the notebooks) share one environment. The longest groups
  start first, so that no long one is left running alone at the end.
"""

import pytest

from tools.project import newest_runs

pytest_plugins = ["tests.robustness"]

# The kinds of test that run notebooks, a browser, a hub or nbgrader are all slow: the quick
# loop, `pytest -m "not slow"`, leaves them out. nbval's items (one per notebook cell) count too.
SLOW_KINDS = {"browser", "grading", "compat", "robustness", "static", "newest"}
# The kinds that build an environment of their own from the package index (marker `index`).
INDEX_KINDS = {"grading", "compat", "newest"}
# their tests go to two groups, alternately
SPLIT = ("tests/test_browser.py", "tests/test_compat.py", "tests/test_widgets.py", "tests/test_newest.py")
FIRST = ["tests/test_grading.py", *SPLIT[:2], "tests/test_newest.py", "tests/test_class_load.py",
         "tests/test_lesson_plans.py", "tests/test_grading_cycle.py", "tests/test_grading_settings.py",
         "tests/test_release.py",
         "tests/test_widgets.py", "tests/test_static_site.py",
         "notebooks/"]  # the longest groups, longest first (about 140 s to 10 s), then the rest


def rank(nodeid: str) -> int:
    return next((k for k, start in enumerate(FIRST) if nodeid.startswith(start)), len(FIRST))


def groups(nodeids: list[str]) -> dict[str, str]:
    """{test id: its group}: its file, or for a file in SPLIT, one of two halves."""
    seen, named = {}, {}
    for nodeid in nodeids:
        file = nodeid.split("::")[0]
        k = seen[file] = seen.get(file, -1) + 1
        named[nodeid] = f"{file} ({k % 2 + 1} of 2)" if file in SPLIT else file
    return named


@pytest.hookimpl(tryfirst=True)  # after tests/robustness.py's (registered later), before -m deselects
def pytest_collection_modifyitems(config, items):
    skip_newest = None if newest_runs(config.getoption("markexpr")) else pytest.mark.skip(
        reason="the newest releases change from day to day: CI runs these (CI=true); here, "
               "ATTENTION_NEWEST=1 or -m newest")
    for item in items:
        kinds = {m.name for m in item.iter_markers()}
        if str(item.path).endswith(".ipynb") or SLOW_KINDS & kinds:
            item.add_marker(pytest.mark.slow)
        if INDEX_KINDS & kinds:
            item.add_marker(pytest.mark.index)
        if "newest" in kinds and skip_newest:
            item.add_marker(skip_newest)
    items.sort(key=lambda item: rank(item.nodeid))  # stable: each file keeps its order


def pytest_xdist_make_scheduler(config, log):
    """With `--dist loadfile` (addopts): the groups above, handed out in the order collected."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Groups(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            if not hasattr(self, "named"):
                self.named = groups(self.collection)
            return self.named[nodeid]

    config.option.loadscopereorder = False  # not by the number of tests: in the order above
    return Groups(config, log)

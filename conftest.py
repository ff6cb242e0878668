"""Hooks for every item pytest collects, nbval's cells of notebooks/ as well as tests/: here at
the root, because tests/conftest.py is not read when pytest is given only notebooks/.

- The slow items (notebooks, a browser, a hub, nbgrader) carry the marker `slow`, so the quick
  loop is `pytest -m "not slow"`.
- tests/robustness.py adds, after nbval's last cell of each numbered notebook, the robustness
  run in the same kernel.
"""

import pytest

pytest_plugins = ["tests.robustness"]

# The kinds of test that run notebooks, a browser, a hub or nbgrader are all slow: the quick
# loop, `pytest -m "not slow"`, leaves them out. nbval's items (one per notebook cell) count too.
SLOW_KINDS = {"browser", "grading", "compat", "robustness", "static"}


def pytest_collection_modifyitems(items):  # (after tests/robustness.py's, before -m deselects)
    for item in items:
        if str(item.path).endswith(".ipynb") or SLOW_KINDS & {m.name for m in item.iter_markers()}:
            item.add_marker(pytest.mark.slow)

"""Notebooks survive what a class does to them.

nbval (run by the same pytest command) proves that Restart & Run All
reproduces every stored output; right after it, in the same kernel, tests/robustness.py
adds what a class does next (every slider to both ends, a tweaked input and Run All
again). These tests check the stored outputs that a reader without a kernel sees.
"""

import re

import pytest

from tools.notebooks import NOTEBOOKS, compared, ids, read, tags


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_static_readers_see_every_figure(path):
    """A site that renders without a kernel shows the stored images."""
    nb = read(path)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        draws = any(word in cell.source for word in ("ah.heatmap(", "show_static()", "plt.show()",
                                                     "ah.bar_chart(", "ah.vectors_2d("))
        has_png = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
        if draws and "nbval-ignore-output" not in tags(cell):
            assert has_png, f"{path.name} cell {k} draws but stores no image:\n{cell.source}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_only_live_widget_cells_skip_comparison_and_each_has_a_static_twin(path):
    nb = read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    ignored = [k for k, c in enumerate(nb.cells) if c.cell_type == "code" and not compared(c)]
    assert all("nbval-skip" not in tags(nb.cells[k]) for k in ignored), "no cell may be skipped"
    assert len(ignored) * 3 <= len(code), "at least two thirds of the code cells must be compared"
    for k in ignored:
        source = nb.cells[k].source
        if "perf_counter" in source or "timeit" in source:
            continue  # a timing cell (notebook 06): its numbers differ on every run
        twin = next((c for c in nb.cells[k + 1:] if c.cell_type == "code"), None)
        assert twin is not None and "show_static()" in twin.source and "assert" in twin.source, (
            f"{path.name}: the widget cell {k} needs a checked static twin right after it")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_stored_outputs_hold_no_paths_of_the_machine_that_ran_them(path):
    """Tracebacks carry file paths; scripts/execute_notebooks.py keeps only their last line."""
    text = path.read_text()
    # an absolute path to a Python file (a traceback's frame)
    # (after a space, a quote or a colour code such as \u001b[32m), an installed package, a Windows home
    for pattern in (r"(?:(?<![\w.])|(?<=\dm))/[\w.\-]+/[\w.\-/]*\.py\b", r"site-packages",
                    r"[A-Z]:\\\\Users"):
        assert not re.search(pattern, text), f"{path.name} stores a local path matching {pattern}"

"""Notebooks survive what a class does to them.

nbval (run by the same pytest command) proves that Restart & Run All
reproduces every stored output. These tests add what a class does next: every
slider dragged to both ends, a tweaked input and Run All again without a
restart, in one kernel whose memory is read on the way; and the stored
outputs that a reader without a kernel sees.
"""

import copy
import json
import re

import pytest

from tools.memory import KERNEL_BUDGET_MIB, PEAK
from tools.notebooks import (
    NOTEBOOKS,
    client_for,
    compared,
    ids,
    read,
    run_cells,
    run_code,
    tags,
    text_outputs,
)
from tools.sweep import SWEEP

# A student's tweak of one input per notebook: (text in the cell, replacement).
EDITS = {
    "00": ('"cat": np.array([0.8, 0.3, 0.6, 0.2])', '"cat": np.array([0.9, -0.3, 0.6, 0.2])'),
    "01": ("[0.5, 0.0],   # from X dimension 2", "[0.7, 0.2],   # from X dimension 2"),
    "02": ("tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()\n",
           "tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()\nX[1, 0] = 2.5  # eats, tweaked\n"),
    "03": ("q = np.array([0.5, -1.2, 0.3, 2.0])", "q = np.array([0.9, -1.2, 0.3, 2.5])"),
    "04": ("s = np.array([3.2, 4.0, 1.0, 6.2, 8.0])", "s = np.array([3.2, 4.0, 1.0, 7.0, 8.0])"),
    "05": ("tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()\n",
           "tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()\nX[0] = [1.5, 2.0]  # cat, tweaked\n"),
    "05b": ("W_O = np.array([[1.0, 0.0, 0.5, 0.0],", "W_O = np.array([[1.5, 0.0, 0.5, 0.0],"),
    "06": ("X = rng.normal(size=(5, 4))", "X = 2 * rng.normal(size=(5, 4))"),
    "07": ("X = rng.normal(size=(4, 6))", "X = 2 * rng.normal(size=(4, 6))"),
    "08": ("X = rng.normal(size=(6, 8))", "X = 1.5 * rng.normal(size=(6, 8))"),
    "09": ("Q, K, V = 1.5 * rng.normal(size=(n, d))", "Q, K, V = 2.5 * rng.normal(size=(n, d))"),
    "10": ("Q, K, V, dO = (rng.normal(size=(n, d)) for _ in range(4))",
           "Q, K, V, dO = (2 * rng.normal(size=(n, d)) for _ in range(4))"),
    "11": ("dull = np.array([-2.0, -2.1, -1.9, -2.0])", "dull = np.array([-2.0, -2.6, -1.4, -2.0])"),
}


def edited(nb, key):
    """A copy of `nb` with the student's tweak applied to its one input cell."""
    old, new = EDITS[key]
    nb = copy.deepcopy(nb)
    cells = [c for c in nb.cells if c.cell_type == "code" and old in c.source]
    assert len(cells) == 1, f"the input cell to tweak ({old!r}) is not in the notebook once"
    cells[0].source = cells[0].source.replace(old, new)
    return nb, nb.cells.index(cells[0])


@pytest.mark.robustness
@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_run_all_drag_every_slider_to_its_ends_then_tweak_an_input_and_run_all_again(path):
    """One kernel, as a student uses it: Run All (then the kernel's peak memory is read: it must
    stay under the budget a class hub is sized by, tools/memory.py), every slider to both ends,
    then a tweak of one input and Run All again without a restart. The second run must raise
    nothing (every shape and row-sum assert in the notebook still holds), give the same outputs
    up to the tweaked cell, and the tweak must change what follows it."""
    nb = read(path)
    tweaked, k_edit = edited(nb, path.stem.split("_")[0])
    client = client_for(nb, path)
    with client.setup_kernel():
        first = run_cells(client, nb)
        peak = float(run_code(client, PEAK).strip())
        report = json.loads(run_code(client, SWEEP).strip().splitlines()[-1])
        client.nb = tweaked
        second = run_cells(client, tweaked)  # Run All again, no restart, with the student's tweak
    assert 30 < peak < KERNEL_BUDGET_MIB, \
        f"{path.name}: the kernel peaked at {peak:.0f} MiB after Run All (budget {KERNEL_BUDGET_MIB} MiB)"
    assert any(text_outputs(b) != text_outputs(a) for a, b in zip(first[k_edit:], second[k_edit:])
               if compared(a)), "the tweak changed no output"
    for k, (a, b) in enumerate(zip(first[:k_edit], second[:k_edit])):
        if compared(a):
            assert text_outputs(a) == text_outputs(b), f"cell {k} changes on a second Run All:\n{a.source}"

    assert report, f"{path.name} has no ah.Panel with sliders"
    bad = [row for row in report if not row[4]]
    assert not bad, f"sliders giving non-finite values at an end: {bad}"
    assert all(row[5] > 0 for row in report)
    uncovered = [row[:4] for row in report if not row[6]]
    assert not uncovered, f"a slider's end is beyond a scale: {uncovered}"
    # The fast redraw (_fastdraw.png) shows what a full draw of the figure shows, on the real panels.
    unlike = [row[:4] + row[7:] for row in report if row[7] or row[8] >= 4]
    assert not unlike, f"the live picture differs from a full draw (pixels, worst number): {unlike}"


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

"""The robustness run: what a class does after Run All, in the kernel nbval has just run.

nbval (`--nbval`, in the pytest command) runs each notebook cell by cell in one
kernel and compares every output with the stored one. After its last cell, this
plugin (loaded by the root's conftest.py) adds one more item per numbered notebook,
SecondRun, which goes on in
that same kernel, as a student does: the kernel's peak memory is read (it must
stay under the budget a class hub is sized by, tools/memory.py), every slider of
every panel goes to both ends (tools/sweep.py), then one input is tweaked and the whole notebook
runs again without a restart. The second run must raise nothing (every shape and
row-sum assert in the notebook still holds), give the stored outputs up to the
tweaked cell, and the tweak must change something after it. So the first Run All
is nbval's own, and each notebook runs twice here, not three times.

Where nbval's cells did not all run first (`pytest -m robustness`, or `-k`), the
item restarts the kernel and runs the notebook itself, comparing its outputs with
the stored ones as nbval does for text.
"""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from nbval.plugin import IPyNbCell

from tools.memory import KERNEL_BUDGET_MIB, PEAK
from tools.notebooks import NOTEBOOKS, compared, read, tags, text_outputs
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
TIMEOUT = 120  # seconds for one cell


def edited(nb, key):
    """A copy of `nb` with the student's tweak applied to its one input cell."""
    old, new = EDITS[key]
    nb = copy.deepcopy(nb)
    cells = [c for c in nb.cells if c.cell_type == "code" and old in c.source]
    assert len(cells) == 1, f"the input cell to tweak ({old!r}) is not in the notebook once"
    cells[0].source = cells[0].source.replace(old, new)
    return nb, nb.cells.index(cells[0])


def execute(kernel, source: str) -> tuple[bool, list]:
    """Run `source` in nbval's kernel; return whether it raised, and its outputs as nbformat
    outputs (a clear_output clears them, as the front end does)."""
    msg_id = kernel.execute_cell_input(source, allow_stdin=False)
    outputs, clear_pending = [], False
    while True:
        msg = kernel.get_message(stream="iopub", timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            break
        if kind == "clear_output":
            outputs, clear_pending = (outputs, True) if content.get("wait") else ([], False)
        elif kind in ("stream", "display_data", "execute_result", "error"):
            if clear_pending:
                outputs, clear_pending = [], False
            outputs.append(nbformat.v4.output_from_msg(msg))
    kernel.await_reply(msg_id, timeout=TIMEOUT)  # and the shell's reply: the channel stays in step
    return any(o.output_type == "error" for o in outputs), outputs


def run_all(kernel, nb, name: str) -> list:
    """Every code cell of `nb`, in order; a copy of the cells with their new outputs. A cell that
    raises fails the test unless it is tagged raises-exception."""
    cells = copy.deepcopy(nb.cells)
    for k, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        raised, cell.outputs = execute(kernel, cell.source)
        if raised and "raises-exception" not in tags(cell):
            errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
            pytest.fail(f"{name} cell {k} raised {errors}:\n{cell.source}")
    return cells


def differing(stored, fresh) -> list[int]:
    """The compared cells whose text outputs (sanitized, as nbval sees them) differ."""
    return [k for k, (a, b) in enumerate(zip(stored, fresh))
            if compared(a) and text_outputs(a) != text_outputs(b)]


class SecondRun(pytest.Item):
    """After nbval's Run All, in its kernel: peak memory, every slider to both ends, then a
    tweak of one input and Run All again."""

    def runtest(self):
        path, kernel = self.path, self.parent.kernel
        stored = read(path)
        if self.parent.ran != {c.cell_num for c in self.parent.cells}:
            kernel.restart()  # nbval's cells did not all run in this kernel: Run All here
            first = run_all(kernel, stored, path.name)
            assert not differing(stored.cells, first), \
                f"{path.name}: cells {differing(stored.cells, first)} differ from the stored outputs"
        _, peak = execute(kernel, PEAK)
        peak = float("".join(o.get("text", "") for o in peak).strip())
        _, sweep = execute(kernel, SWEEP)
        report = json.loads("".join(o.get("text", "") for o in sweep).strip().splitlines()[-1])
        tweaked, k_edit = edited(stored, path.stem.split("_")[0])
        second = run_all(kernel, tweaked, path.name)  # Run All again, no restart, with the tweak

        assert 30 < peak < KERNEL_BUDGET_MIB, \
            f"{path.name}: the kernel peaked at {peak:.0f} MiB after Run All (budget {KERNEL_BUDGET_MIB} MiB)"
        changed = differing(stored.cells[k_edit:], second[k_edit:])
        assert changed, f"{path.name}: the tweak of cell {k_edit} changed no output after it"
        for k in differing(stored.cells[:k_edit], second[:k_edit]):
            pytest.fail(f"cell {k} changes on a second Run All:\n{stored.cells[k].source}")

        assert report, f"{path.name} has no ah.Panel with sliders"
        bad = [row for row in report if not row[4]]
        assert not bad, f"sliders giving non-finite values at an end: {bad}"
        unsent = [row[:4] for row in report if not row[5]]
        assert not unsent, f"the picture was not sent what the panel computes at: {unsent}"
        uncovered = [row[:4] for row in report if not row[6]]
        assert not uncovered, f"a slider's end is beyond a scale: {uncovered}"

    def reportinfo(self):
        return self.path, None, f"{self.path.name}: sliders to their ends, a tweak, Run All again"


NAME = "after Run All: every slider to its ends, then a tweak and Run All again"


@pytest.hookimpl(tryfirst=True)  # before -m and -k deselect
def pytest_collection_modifyitems(items):
    """After the last nbval cell of each numbered notebook, its SecondRun (marker robustness)."""
    numbered = {str(p) for p in NOTEBOOKS}
    last = {}
    for k, item in enumerate(items):
        if isinstance(item, IPyNbCell) and str(item.path) in numbered:
            last[item.parent] = k
    for parent, k in sorted(last.items(), key=lambda pair: -pair[1]):
        parent.cells = [i for i in items if isinstance(i, IPyNbCell) and i.parent is parent]
        parent.ran = set()
        second = SecondRun.from_parent(parent, name=NAME)
        second.add_marker(pytest.mark.robustness)
        second.add_marker(pytest.mark.slow)
        items.insert(k + 1, second)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember which of nbval's cells ran in the notebook's kernel (passed or failed)."""
    report = yield
    if isinstance(item, IPyNbCell) and call.when == "call" and hasattr(item.parent, "ran"):
        item.parent.ran.add(item.cell_num)
    return report

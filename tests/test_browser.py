"""Every notebook in a real JupyterLab in headless Chromium, as a learner sees it.

For each notebook: open it, Run All, no cell shows an error (except cells
tagged raises-exception) and the browser console shows none; then every
panel is operated with the keyboard alone: Tab reaches each slider in turn
(each with a visible label); End, Home and the arrow keys move each control
and the first slider of each weight matrix to its top end, its bottom end and
back, and each move must change the picture bound to it (and coming back must
restore it exactly) without the kernel printing a warning or a traceback; at
each end the picture the browser drew (browser_view.js's SVG) must show what the
panel's static twin shows when matplotlib draws it in the kernel at the same
values: every cell's colour, number and ink, the colour bar's and value axis'
labels, the bars, the read-outs (tools/pictures.py). (The other entries of a
matrix are the same widget wired the same way; every one of them is moved to
both ends, its values and scales checked, by the robustness sweep.) A
screenshot per notebook lands in test-artifacts/screenshots/.

Run only these with `python -m pytest -m browser`, skip them with -m "not browser".
They need Chromium (see HOW_TO_ENABLE in tools/jupyterlab_driver.py); without it they skip,
except in CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tools.jupyterlab_driver import (
    CHANGE_TIMEOUT,
    JupyterLab,
    alive,
    close_documents,
    descendants,
    iopub_errors,
    open_notebook,
    press,
    run_all,
    settle,
)
from tools.notebooks import NOTEBOOKS
from tools.pictures import check_panels, same_picture

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-artifacts" / "screenshots"


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    folder = tmp_path_factory.mktemp("notebooks")
    shutil.copytree(ROOT / "notebooks", folder, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    # No screenshot of a notebook that is gone; each test replaces its own (and the other half
    # of these tests may run in the other worker at the same time).
    for old in set(SHOTS.glob("*.png")) - {SHOTS / f"{p.stem}.png" for p in NOTEBOOKS}:
        old.unlink()
    with JupyterLab(folder) as server:
        yield server
    assert not server.left_behind, f"processes survived the server's shutdown: {server.left_behind}"


@pytest.fixture(scope="module")
def tab():
    """One JupyterLab tab for the module, as a student opens one notebook after another in it
    (open_notebook; loading JupyterLab anew would cost 2-3 s a test). A test that leaves it
    unusable (a dialog open, the page gone) leaves the next test a new tab."""
    shared = {}
    yield shared
    if shared.get("page") and not shared["page"].is_closed():
        shared["page"].close()


@pytest.fixture
def page(browser, lab, tab):
    page = tab.get("page")
    if page is None or page.is_closed():
        page = tab["page"] = browser.new_page()
        page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
        page.on("pageerror", lambda e: page.console_errors.append(f"uncaught: {e}"))
    page.console_errors = []
    yield page
    try:
        if page.evaluate("() => !!window.jupyterapp"):
            close_documents(page)  # before their kernels stop, so the page sees no kernel die
        usable = page.query_selector(".jp-Dialog") is None
    except Exception:  # the page crashed or was closed
        usable = False
    lab.shutdown_kernels()
    if not usable:
        page.close()


def _name(handle) -> str:
    return handle.evaluate("""h => {
        const cell = h.closest('.jp-Cell'), cells = [...cell.parentElement.children];
        const label = h.closest('.widget-slider')?.querySelector('.widget-label')?.textContent;
        const group = h.closest('.widget-vbox')?.querySelector('.widget-html-content b')?.textContent;
        return `slider ${label || '?'}${group ? ' of ' + group : ''} in cell ${cells.indexOf(cell)}`;
    }""")


# The weight matrix a slider sets (the bold name above its group), or null for a control.
_MATRIX = "h => h.closest('.widget-vbox')?.querySelector('.widget-html-content b')?.textContent ?? null"

# A slider's label: there, with text, and taking up room on the screen.
_LABELLED = """h => { const l = h.closest('.widget-slider')?.querySelector('.widget-label');
    return !!l && l.textContent.trim() !== '' && l.offsetWidth > 0 && l.offsetHeight > 0; }"""


def _tab_to(page, handle, presses: int = 4) -> bool:
    """Press Tab (at most `presses` times) until `handle` has the focus."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if handle.evaluate("h => document.activeElement === h"):
            return True
    return False


def exercise_sliders(page) -> tuple[int, list[str]]:
    """Operate every panel with the keyboard alone; return (sliders, problems).

    From the top of a panel's output, Tab must reach each slider in order, and
    each must have a visible label. End, Home and the arrow keys move each control
    and the first entry of each weight matrix to its top end, its bottom end and
    back: each move that changes the value must change the picture; back at the
    start value the picture must be exactly the first one (no stale redraw).
    """
    problems, n = [], 0
    for scope in page.query_selector_all(".jp-Notebook .jp-OutputArea:has(.noUi-handle)"):
        # Where a student's Tab starts: the top of the panel (as after clicking beside it).
        scope.evaluate("s => { s.tabIndex = -1; s.scrollIntoView({block: 'start'}); s.focus(); }")
        matrices = set()  # the weight matrices whose first entry has been moved
        for handle in scope.query_selector_all(".noUi-handle"):
            if handle.get_attribute("aria-disabled") == "true":
                continue
            n += 1
            name, matrix = _name(handle), handle.evaluate(_MATRIX)
            if not handle.evaluate(_LABELLED):
                problems.append(f"{name}: no visible label")
            if not _tab_to(page, handle):
                problems.append(f"{name}: Tab does not reach it from the slider before")
                handle.focus()  # so its keys are still tested
            if matrix is None or matrix not in matrices:
                matrices.add(matrix)
                problems += _move_with_keys(page, handle, name)
    return n, problems


def _move_with_keys(page, handle, name) -> list[str]:
    problems = []
    # noUiSlider's own API: the exact value (aria-valuenow is rounded), the step and the range.
    slider = handle.evaluate("""h => { const s = h.closest('.noUi-target').noUiSlider;
        return {value: Number(s.get(true)), step: s.options.step, min: s.options.range.min}; }""")
    steps = (slider["value"] - slider["min"]) / slider["step"]
    start_value, start = handle.get_attribute("aria-valuenow"), settle(page, handle)
    top_value, top = press(page, handle, "End")
    problems += same_picture(page, handle, f"{name} at {top_value} (End)")
    bottom_value, bottom = press(page, handle, "Home")
    problems += same_picture(page, handle, f"{name} at {bottom_value} (Home)")
    for key, value_before, value, before, after in (("End", start_value, top_value, start, top),
                                                    ("Home", top_value, bottom_value, top, bottom)):
        if value != value_before and after == before:
            problems.append(f"{name}: the picture did not change after {key} ({value_before} -> {value})")
    # Back to where it started, one step at a time, as fast as keys go: the
    # kernel sees only some of the steps, but must end on the last one.
    for _ in range(round(steps)):
        page.keyboard.press("ArrowRight")
    back = settle(page, handle)
    if back != start and abs(steps - round(steps)) < 1e-6:  # (a start between steps can't be reached)
        problems.append(f"{name}: back at {start_value}, the picture is not the one it started with "
                        f"(slider shows {handle.get_attribute('aria-valuenow')}; a stale redraw?)")
    print(f"  {name}: {start_value} -> {top_value} -> {bottom_value} -> back")
    return problems


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_every_slider_redraws(notebook, lab, page):
    t0, log_start = time.monotonic(), len(lab.log())
    open_notebook(page, lab, notebook.name)
    cells = run_all(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{notebook.stem}.png"
    shot.unlink(missing_ok=True)  # only this run's
    try:
        failed = [c for c in cells if c["errors"] and "raises-exception" not in c["tags"]]
        assert not failed, "cells show errors:\n" + "\n".join(
            f"  cell {c['index']}: {c['errors']}" for c in failed)
        not_run = [c["index"] for c in cells if c["count"] is None and c["source"].strip()]
        assert not not_run, f"cells did not run: {not_run}"
        assert not page.console_errors, f"browser console errors after Run All: {page.console_errors}"
        iopub_errors(page, clear=True)  # the raises-exception cells' tracebacks are expected

        n, problems = exercise_sliders(page)
        kernel_said = iopub_errors(page)
        assert not problems, "\n".join(problems)
        assert not kernel_said, f"the kernel printed errors or warnings while sliders moved: {kernel_said}"
        assert not page.console_errors, f"browser console errors while sliders moved: {page.console_errors}"
        log = lab.log()[log_start:]
        assert "Traceback" not in log, f"the server or the kernel logged a traceback:\n{log}"
    finally:
        # The first slider panel in view (its picture under its sliders), or wherever Run All ended.
        page.evaluate("""() => document.querySelector('.jp-Notebook .jp-OutputArea .noUi-handle')
            ?.closest('.jp-OutputArea').scrollIntoView({block: 'start'})""")
        page.screenshot(path=shot)
        print(f"\n{notebook.name}: screenshot {shot.relative_to(ROOT)}")
    print(f"{notebook.name}: {len(cells)} code cells and {n} sliders in {time.monotonic() - t0:.1f} s")


def _open_one_cell_notebook(page, lab, name: str, source: str) -> None:
    """Write a notebook of one code cell into the server's folder and open it."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, lab.root / name)
    open_notebook(page, lab, name)


def test_the_next_notebook_opens_in_the_same_tab_without_loading_jupyterlab_again(lab, page):
    """As a student opens one notebook after another (and as the tests above do, to save the
    2-3 s of loading JupyterLab each time): the page is not loaded again."""
    _open_one_cell_notebook(page, lab, "_first.ipynb", "1 + 1")
    page.evaluate("() => { window.__stayed = true; }")
    _open_one_cell_notebook(page, lab, "_second.ipynb", "2 + 2")
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path") == "_second.ipynb"
    assert page.evaluate("() => window.__stayed === true"), "the second notebook loaded JupyterLab again"


def test_with_the_course_settings_a_slider_move_runs_in_the_kernels_main_thread(lab, page):
    """lab-settings/overrides.json (used by the README's launch command, Binder and these tests)
    keeps widget messages off JupyterLab's kernel subshells: in order with the cells, and
    faster (see the README's performance section). With JupyterLab's default the second
    move already runs in a subshell thread."""
    _open_one_cell_notebook(page, lab, "_threads.ipynb",
                            "import threading, ipywidgets\nthreads = []\nslider = ipywidgets.IntSlider()\n"
                            "slider.observe(lambda change: threads.append(threading.current_thread().name), "
                            "'value')\nslider")
    run_all(page)
    handle = page.wait_for_selector(".jp-OutputArea .noUi-handle")
    handle.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(100)
    deadline, threads = time.monotonic() + CHANGE_TIMEOUT, []
    while len(threads) < 3 and time.monotonic() < deadline:
        threads = page.evaluate("""async () => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            const future = kernel.requestExecute({code: 'print(*threads)'});
            let out = '';
            future.onIOPub = msg => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
            await future.done;
            return out.split(/\\s+/).filter(Boolean);
        }""")
    assert threads == ["MainThread"] * 3, threads


def test_with_the_course_settings_a_busy_kernel_shows_in_the_status_bar_only(lab, page):
    """lab-settings/ switches off the notebook toolbar's busy indicator and the tab icon that
    flips at every busy and idle (two page redraws per slider move; see the README's
    performance section). A student still sees a running cell: [*] beside it and "Busy"
    in the status bar, and "Idle" there when it is done."""
    _open_one_cell_notebook(page, lab, "_busy.ipynb", "import time\ntime.sleep(4)")
    page.evaluate("""async () => {
        await window.jupyterapp.shell.currentWidget.sessionContext.ready;
        window.jupyterapp.commands.execute('notebook:run-all-cells');  // not awaited: it runs 4 s
    }""")
    page.wait_for_function("document.querySelector('#jp-main-statusbar').innerText.includes('| Busy')",
                           timeout=30_000)
    assert page.inner_text(".jp-InputArea-prompt").strip() == "[*]:"
    toolbar = page.evaluate("""[...document.querySelectorAll('.jp-NotebookPanel-toolbar [data-jp-item-name]')]
                               .map(item => item.dataset.jpItemName)""")
    assert "kernelName" in toolbar and "executionProgress" not in toolbar, toolbar
    icon = page.evaluate("""[...document.querySelectorAll('link.favicon')]
                            .map(link => link.className + ' ' + link.rel)""")
    assert "idle favicon icon" in icon and "busy favicon " in icon, icon  # the idle icon stays on
    page.wait_for_function("document.querySelector('#jp-main-statusbar').innerText.includes('| Idle')",
                           timeout=30_000)


def test_stopping_jupyterlab_leaves_no_process_behind(tmp_path):
    """The server stops with its kernels, even when a kernel is still running."""
    with JupyterLab(tmp_path) as server:
        server.api("kernels", method="POST")
        deadline = time.monotonic() + 30
        while not (children := descendants(server.proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert children, "the kernel did not start"
    assert not server.left_behind
    assert not [pid for pid in children if alive(pid)]


# Two notebooks that show most kinds of picture between them: heatmaps with fixed scales, signed
# and not, and a read-out (05), a causal mask's hatching (10). Bars and named states are drawn in
# the other front ends' tests and, with every notebook, in JupyterLab above.
FRONT_END_NOTEBOOKS = ["05_weighted_sum_and_self_attention.ipynb", "10_attention_that_learns.ipynb"]


def _in_notebook_core(error) -> bool:
    """True for an uncaught error thrown by Notebook 7's own code (the first frame of its stack)."""
    frames = (error.stack or "").split("\n")[1:2]
    return bool(frames) and "/static/notebook/notebook_core." in frames[0]


def test_the_panels_draw_their_pictures_in_notebook_7(browser, tmp_path):
    """Notebook 7, the other front end a class may open (the lock's, in this environment): the same
    pictures, drawn in the browser, following the sliders, equal to the static twin at both ends
    of the first slider (tools/pictures.py's check_panels)."""
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    page = browser.new_page()
    page.console_errors = []
    # Notebook 7.6's own keyboard-shortcuts plugin throws on a settings change of a plugin it has
    # no schema for, in its own code (notebook_core), on a plain notebook too: not the course's.
    page.on("pageerror", lambda e: not _in_notebook_core(e) and page.console_errors.append(f"uncaught: {e}"))
    problems = []
    with JupyterLab(tmp_path, app="notebook") as server:
        for name in FRONT_END_NOTEBOOKS:
            problems += check_panels(page, server, f"notebooks/{name}")
    page.close()
    assert not problems and not page.console_errors, "\n".join(problems + page.console_errors)


"""The lesson plans in teachers/ run as written (marker `slow`).

Each plan is a markdown table with one row per notebook; its "run" column lists
the sections the class runs ("Steps 1–3, Live"). Everything else is skipped. For
every notebook a plan uses, this builds the notebook with exactly those
sections (the title, "You will learn" and the setup cell always stay), runs it
and fails on any error: a skipped step that a kept one needs gives a NameError
here, not in class. A plan's notebooks run one after another in one kernel,
each after `%reset -f` (its names gone, as in a kernel of its own, so a missing
one still raises; what a reset keeps, the imported modules, every notebook
imports in its setup cell anyway): a kernel and the helper's import cost about
2 s of CPU each, half of such a run. Each exit-ticket question names the step
that teaches it, "*(02 · Step 4)*", and that step must be among the plan's.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
PLANS = [ROOT / "teachers" / "plan_90_minutes.md", ROOT / "teachers" / "plan_half_day.md"]
ALWAYS = {"title", "You will learn"}  # the goal, the outline and the setup cell
ROW = re.compile(r"^\|[^|]*\|\s*\[(\d\d\w?)\]\(\.\./notebooks/([\w]+\.ipynb)\)\s*\|([^|]*)\|", re.M)
TAUGHT = re.compile(r"\*\((\d\d\w?) · ([^)]+)\)\*")


def section_names(text: str) -> list[str]:
    """'Steps 1–3, 5, Live' -> ['Step 1', 'Step 2', 'Step 3', 'Step 5', 'Live']."""
    names, numbered = [], False
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = re.fullmatch(r"(?:(Steps?)\s+)?(\d+)(?:\s*[–-]\s*(\d+))?", item)
        if match and (match[1] or numbered):
            numbered = True
            last = int(match[3] or match[2])
            names += [f"Step {k}" for k in range(int(match[2]), last + 1)]
        else:
            numbered = False
            names.append(item)
    return names


def plan_rows(path: Path) -> dict[str, tuple[str, list[str]]]:
    """{notebook number: (file name, sections to run)} from a plan's table."""
    rows = {}
    for number, name, run in ROW.findall(path.read_text(encoding="utf-8")):
        if number in rows:
            raise ValueError(f"{path.name} lists notebook {number} twice")
        rows[number] = (name, section_names(run))
    return rows


def section_of(cell, current: str) -> str:
    """The section a cell opens (its level-2 heading), or `current`."""
    if cell.cell_type == "markdown":
        for line in cell.source.splitlines():
            match = re.match(r"##\s+(Step \d+|[^·]+?)(?:\s+·.*)?$", line)
            if match and not line.startswith("###"):
                return match[1].strip()
    return current


def sections(nb) -> list[str]:
    current, names = "title", []
    for cell in nb.cells:
        current = section_of(cell, current)
        names.append(current)
    return names


def kept_notebook(path: Path, keep: list[str]):
    nb = nbformat.read(path, as_version=4)
    names = sections(nb)
    unknown = set(keep) - set(names)
    if unknown:
        raise ValueError(f"{path.name} has no section {sorted(unknown)}; it has {sorted(set(names))}")
    nb.cells = [cell for cell, name in zip(nb.cells, names) if name in ALWAYS or name in keep]
    return nb


def exit_ticket(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    ticket = text[text.index("## Exit ticket"):]
    questions = re.findall(r"^\d+\. .*?(?=^\d+\. |\Z)", ticket, re.M | re.S)
    assert questions, f"{path.name}: no numbered questions under ## Exit ticket"
    taught = []
    for question in questions:
        match = TAUGHT.search(question)
        assert match, f"{path.name}: this question names no step that teaches it: {question[:60]!r}"
        taught.append((match[1], match[2].strip()))
    return taught


CASES = [(plan, number) for plan in PLANS for number in plan_rows(plan)]


def test_the_parser_reads_ranges_and_names():
    assert section_names("Steps 1–3, 5, Live") == ["Step 1", "Step 2", "Step 3", "Step 5", "Live"]
    assert section_names("Step 4, Try this, Summary") == ["Step 4", "Try this", "Summary"]
    assert section_names("Live") == ["Live"]


def test_each_plan_uses_notebooks():
    for plan in PLANS:
        assert len(plan_rows(plan)) >= 5, f"{plan.name}: no table of notebooks found"


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_every_exit_ticket_question_is_taught_in_the_plan(plan):
    rows = plan_rows(plan)
    for number, step in exit_ticket(plan):
        assert number in rows, f"{plan.name}: the exit ticket asks about {number}, which the plan skips"
        assert step in rows[number][1], (
            f"{plan.name}: the exit ticket asks about {number} · {step}, but the plan runs "
            f"only {rows[number][1]}")


@pytest.fixture(scope="module")
def kernels():
    """{plan: its kernel}, each started when its plan's first notebook runs."""
    started = {}

    def kernel(plan):
        if plan not in started:
            km = started[plan] = KernelManager(kernel_name="python3")
            # The figures are made but not turned into PNGs (a third of the run): what a plan can
            # break is a later cell's use of something a skipped one defines, and nbval draws
            # every figure anyway.
            km.start_kernel(cwd=str(ROOT / "notebooks"),
                            extra_arguments=["--InlineBackend.figure_formats=set()"])
        return started[plan]

    yield kernel
    for km in started.values():
        km.shutdown_kernel(now=True)


def run_after_reset(nb, km) -> None:
    """Run `nb` in the kernel `km` with none of the names an earlier notebook left there."""
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "%reset -f\nimport matplotlib.pyplot\nmatplotlib.pyplot.close('all')\ndel matplotlib"))
    client = NotebookClient(nb, km=km, timeout=300, resources={"metadata": {"path": str(ROOT / "notebooks")}})
    try:
        client.execute()  # raises CellExecutionError, naming the cell, on the first error
    finally:
        if client.kc is not None:
            client.kc.stop_channels()


@pytest.mark.slow
@pytest.mark.parametrize("plan, number", CASES, ids=[f"{p.stem}-{n}" for p, n in CASES])
def test_the_plan_runs_as_written(plan, number, kernels):
    name, keep = plan_rows(plan)[number]
    run_after_reset(kept_notebook(ROOT / "notebooks" / name, keep), kernels(plan))


@pytest.mark.slow
def test_a_name_an_earlier_notebook_of_the_plan_defined_is_gone_in_the_next(kernels):
    km = kernels(PLANS[0])
    run_after_reset(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("leftover = 1")]), km)
    uses = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("leftover")])
    with pytest.raises(CellExecutionError, match="NameError"):
        run_after_reset(uses, km)

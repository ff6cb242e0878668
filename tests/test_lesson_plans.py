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

from tools.lesson_plans import (
    PLANS,
    ROOT,
    kept_notebook,
    plan_rows,
    run_minutes,
    section_names,
    sections,
    slots,
)

TAUGHT = re.compile(r"\*\((\d\d\w?) · ([^)]+)\)\*")
LENGTH = {"plan_90_minutes": 90, "plan_half_day": 240}  # minutes, as each plan's title says


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


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_every_slot_holds_what_its_row_asks_students_to_run_by_the_model(plan):
    """Each row's "model" column is the reading-time model's minutes for exactly the sections
    it runs (computed here from the notebook), no row's slot is shorter, the slots follow one
    another without a gap or an overlap, and the plan ends within its length."""
    found = slots(plan)
    assert found[0]["start"] == 0 and found[-1]["end"] <= LENGTH[plan.stem], plan.name
    for before, after in zip(found, found[1:]):
        assert before["end"] == after["start"], f"{plan.name}: a gap or overlap at minute {before['end']}"
    for slot in found:
        if slot["notebook"] is None:
            continue
        number, name = slot["notebook"]
        minutes = run_minutes(ROOT / "notebooks" / name, slot["run"])
        assert slot["model"] == round(minutes, 1), f"{plan.name}, {number}: the model says {minutes:.1f} min"
        length = slot["end"] - slot["start"]
        assert minutes <= length, f"{plan.name}, {number}: {minutes:.1f} min in a {length}-minute slot"


def test_the_model_of_a_row_is_the_notebooks_minutes_for_just_those_cells():
    """run_minutes counts only the kept cells: the whole notebook's sections give its full time,
    fewer give less (an independent count of one small case: 00 with no step is the title, the
    outline and the setup cell)."""
    from tools.lesson_time import lesson_time
    path = ROOT / "notebooks" / "00_input_matrix.ipynb"
    every = sorted(set(sections(nbformat.read(path, as_version=4))))
    assert run_minutes(path, every) == pytest.approx(lesson_time(path).minutes)
    nb = kept_notebook(path, [])
    assert [c.cell_type for c in nb.cells].count("code") == 1  # the setup cell
    assert run_minutes(path, []) < run_minutes(path, ["Step 1"]) < lesson_time(path).minutes


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


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_the_students_handout_asks_the_plans_exit_ticket_questions(plan):
    """teachers/exit_tickets.md, printed for students, holds each plan's questions word for
    word, without the teacher's step references."""
    def questions(text):
        found = re.findall(r"^\d+\. .*?(?=^\d+\. |\Z)", text, re.M | re.S)
        return [" ".join(re.sub(r"\*\([^)]*\)\*", "", q).split()) for q in found]

    text = plan.read_text(encoding="utf-8")
    handout = (ROOT / "teachers" / "exit_tickets.md").read_text(encoding="utf-8")
    block = handout[handout.index(f"<!-- ticket: {plan.stem} -->"):]
    block = block[:block.index("<!-- end of ticket -->")]
    assert questions(block) == questions(text[text.index("## Exit ticket"):])
    assert "*(" not in block  # no step references on the students' sheet

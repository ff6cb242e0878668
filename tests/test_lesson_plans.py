"""The lesson plans in teachers/ fit their minutes and run as written (the runs: marker `slow`).

Each plan is a markdown table with one row per slot (tools/lesson_plans.py reads it). A slot
must hold what the row asks for, computed here: the reading-time model's minutes for the
sections the students run (tools.lesson_time, on the notebook as it is today), plus the plans'
allowances, stated once in the 90-minute plan's table "How long a slot is": so many minutes per
stop-and-ask question (the questions counted in the row's "stop and ask" cell, where they are
written), per panel on the projector (the panels counted in the notebook's sections the row
shows), for the launch (the first slot) and per exit-ticket question (the last slot). The
slots follow one another within the plan's length, and the half-day plan has a break at least
every 75 minutes.

For every notebook a plan uses, the runs build the notebook with exactly the sections the
students run and the teacher shows on the projector (the title, "You will learn" and the setup
cell always stay), run it and fail on any error: a skipped step that a kept one needs gives a
NameError here, not in class. A plan's notebooks run one after another in one kernel, each
after `%reset -f` (its names gone, as in a kernel of its own, so a missing one still raises;
what a reset keeps, the imported modules, every notebook imports in its setup cell anyway): a
kernel and the helper's import cost about 2 s of CPU each, half of such a run. Each
exit-ticket question names the steps that teach it, "*(02 · Step 4 · …)*", and each must be
among the plan's.
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
    ALLOWANCES_PLAN,
    PLANS,
    ROOT,
    allowances,
    fit_problems,
    kept_notebook,
    plan_rows,
    run_minutes,
    section_names,
    sections,
    slots,
    step_section,
    taught,
    ticket,
)

LENGTH = {"plan_90_minutes": 90, "plan_half_day": 240}  # minutes, as each plan's title says
# The longest stretch without a break and the shortest break, in minutes: the half-day plan's, as it
# states ("a 10-minute break at least every 75 minutes"); a 90-minute lesson is one period, as a
# timetable gives it.
BREAKS = {"plan_90_minutes": None, "plan_half_day": (75, 10)}

CASES = [(plan, number) for plan in PLANS for number in taught(plan)]


def problems_of(plan: Path, text: str | None = None) -> list[str]:
    return fit_problems(plan.read_text(encoding="utf-8") if text is None else text, plan.stem,
                        LENGTH[plan.stem], allowances(), BREAKS[plan.stem])


def test_the_parser_reads_ranges_and_names():
    assert section_names("Steps 1–3, 5, Live") == ["Step 1", "Step 2", "Step 3", "Step 5", "Live"]
    assert section_names("Step 4, Try this, Summary") == ["Step 4", "Try this", "Summary"]
    assert section_names("Live") == ["Live"] and section_names("–") == []


def test_the_allowances_are_stated_once_and_the_half_day_plan_links_to_them():
    """The 90-minute plan's table gives each allowance, with its reason; the half-day plan links to
    it and states none of its own."""
    allow = allowances()
    assert set(allow) == {"launch", "question", "panel", "ticket"} and all(v > 0 for v in allow.values())
    half_day = (ROOT / "teachers" / "plan_half_day.md").read_text(encoding="utf-8")
    assert f"({ALLOWANCES_PLAN.name}#how-long-a-slot-is)" in half_day
    assert "| allowance |" not in half_day and not re.search(r"\d+ minutes? (for|per|a) ", half_day)


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_every_slot_holds_its_model_minutes_questions_panels_launch_and_ticket(plan):
    """Each row's "model" column is the model's minutes for exactly the sections it runs, computed
    here from the notebook; each slot is at least its model minutes plus its questions and
    projector panels at the allowances (the launch and the exit ticket theirs); the slots follow
    one another from 0 to within the plan's length; a section shown on the projector has a panel;
    a question is asked at a section the row runs or shows; and the half-day plan never goes 75
    minutes without a break."""
    assert problems_of(plan) == []


def test_a_plan_that_does_not_fit_is_found():
    """fit_problems itself: a question added without minutes, a launch cut short, a break taken
    out or cut short, a projector section without a panel, a question at a skipped step, a stale
    model column."""
    plan = ROOT / "teachers" / "plan_half_day.md"
    text = plan.read_text(encoding="utf-8")
    q = "which in X₁?*"
    assert problems_of(plan, text.replace(q, q + "<br>Step 8: *One more?*")) == [
        "plan_half_day, 00: 30.0 min in a 29-minute slot"]
    assert problems_of(plan, text.replace("| 0:00–0:10 | launch", "| 0:00–0:09 | launch").replace(
        "| 0:10–0:39 | [00]", "| 0:09–0:39 | [00]")) == ["plan_half_day, launch: 10.0 min in a 9-minute slot"]
    no_break = re.sub(r"^\| 1:03–1:13 \|.*$", "| 1:03–1:13 | other | – | – | – | – | – |", text, flags=re.M)
    assert problems_of(plan, no_break) == ["plan_half_day: 125 minutes without a break from minute 0"]
    short = text.replace("| 1:03–1:13 | break |", "| 1:03–1:08 | break |").replace(
        "| 1:13–1:41 | [02]", "| 1:08–1:41 | [02]")
    assert problems_of(plan, short) == ["plan_half_day: a break of 5 minutes at minute 63, less than 10"]
    shown = text.replace("| – | – | Step 1 | Step 1: *Set n_heads", "| – | – | Step 2 | Step 1: *Set n_heads")
    assert problems_of(plan, shown) == [
        "plan_half_day, 05b: Step 2, on the projector, has no panel",
        "plan_half_day, 05b: 'Set n_heads to 2, then 4, and look at ro' is asked at Step 1, "
        "which the row neither runs nor shows"]
    stale = text.replace("| Steps 1–3, 5–8 | 26.0 |", "| Steps 1–3, 5–8 | 27.9 |")
    assert problems_of(plan, stale) == ["plan_half_day, 00: the model column says 27.9, the model 26.0"]


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


def test_each_plan_uses_notebooks_and_counts_its_questions_where_they_are_written():
    for plan in PLANS:
        assert len(plan_rows(plan)) >= 5, f"{plan.name}: no table of notebooks found"
        found = slots(plan)
        asked = [q for slot in found for _, q in slot["asks"]]
        written = re.findall(r"\*([^*]+)\*", "\n".join(slot["row"]["stop and ask"] for slot in found))
        assert len(asked) == len(written) > 0, plan.name
    # a notebook only on the projector is taught, but not opened by the students
    half_day = ROOT / "teachers" / "plan_half_day.md"
    assert "05b" in taught(half_day) and "05b" not in plan_rows(half_day)


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_every_exit_ticket_question_is_taught_in_the_plan(plan):
    rows = taught(plan)
    questions = ticket(plan.read_text(encoding="utf-8"))
    assert questions, f"{plan.name}: no numbered questions under ## Exit ticket"
    for question, refs in questions:
        assert refs, f"{plan.name}: this question names no step that teaches it: {question[:60]!r}"
        for number, step, _ in refs:
            assert number in rows, f"{plan.name}: the exit ticket asks about {number}, which the plan skips"
            section = step_section(step)
            assert section in rows[number][1], (
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
    """What the students run and the teacher shows on the projector, as one notebook."""
    name, keep = taught(plan)[number]
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
        return [" ".join(q.split()).split(" ", 1)[1] for q in found]

    handout = (ROOT / "teachers" / "exit_tickets.md").read_text(encoding="utf-8")
    block = handout[handout.index(f"<!-- ticket: {plan.stem} -->"):]
    block = block[:block.index("<!-- end of ticket -->")]
    assert questions(block) == [q for q, _ in ticket(plan.read_text(encoding="utf-8"))]
    assert "*(" not in block  # no step references on the students' sheet

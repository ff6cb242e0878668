"""Every numbered notebook fits a 55-minute lesson by the course's reading-time model
(tools/lesson_time.py: prose words / 120 + 0.75 per code cell + 5 per panel + 6 per check)."""

import json

import pytest

from tools.lesson_time import LIMIT, NOTEBOOKS, PER_CHECK, lesson_time, prose_words


def test_every_numbered_notebook_is_found_05b_included():
    stems = [p.stem[:3] for p in NOTEBOOKS]
    assert "05b" in stems and stems == sorted(stems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebook_fits_a_lesson(path):
    t = lesson_time(path)
    print(f"{t.name}: {t.minutes:.1f} min ({t.words} words, {t.code_cells} code cells, "
          f"{t.panels} panels, {t.checks} checks)")
    assert t.minutes <= LIMIT, f"{path.name} takes {t.minutes:.1f} min by the model, over {LIMIT}"


def test_the_model_counts_a_hand_made_notebook(tmp_path):
    def cell(kind, source, tags=()):
        return {"cell_type": kind, "source": source, "metadata": {"tags": list(tags)}}
    cells = [
        cell("markdown", "# Two words"),
        cell("markdown", "See [notebook 04](04_softmax.ipynb): $\\mathrm{softmax}(x)$ <b>here</b>."),
        cell("code", "x = 1"),
        cell("code", "panel = ah.Panel(f, views)"),
        cell("code", "panel", tags=["nbval-ignore-output"]),
        cell("code", "ah.checks.check_softmax(my_softmax)"),
    ]
    path = tmp_path / "99_made.ipynb"
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    t = lesson_time(path)
    # words by hand: Two, words / See, notebook, 04, softmax, x, here
    assert (t.words, t.code_cells, t.panels, t.checks) == (8, 4, 1, 1)
    assert t.minutes == pytest.approx(8 / 120 + 4 * 0.75 + 5 + 6)


def test_a_word_is_what_a_reader_reads():
    # The, weights, A, softmax, S, sum, to, 1, 0, 04: no LaTeX command, no link target
    assert prose_words("The weights $A = \\mathrm{softmax}(S)$ sum to 1.0 ([04](04_softmax.ipynb))") == 10


def test_the_guide_gives_each_notebook_the_model_s_minutes():
    """teachers/README.md's lesson column: the model's minutes without and with the exercises, whole."""
    guide = (NOTEBOOKS[0].parents[1] / "teachers" / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        t = lesson_time(path)
        exercises = PER_CHECK * t.checks
        row = next((line for line in guide.splitlines() if f"(../notebooks/{path.name})" in line), None)
        assert row is not None, f"the guide's table has no row for {path.name}"
        expected = f"| {round(t.minutes - exercises)} + {exercises} min |"
        assert row.rstrip().endswith(expected), f"{path.name}: the guide's row should end {expected!r}"

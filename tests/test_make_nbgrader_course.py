"""scripts/make_nbgrader_course.py on a tiny made-up notebook: fast, without nbgrader
(tests/test_grading.py runs the real course through nbgrader)."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

SOLUTIONS = '''\
import numpy as np

SCALE = 2.0


def _double(x):
    return SCALE * x


def my_double(x):
    return _double(x)


row = np.array([1.0, 2.0])  # the notebook's data, repeated for the tests
total = row.sum()
'''

CELLS = [
    new_markdown_cell("# 99 · Doubling"),
    new_code_cell("import numpy as np\nimport attention_helpers as ah"),
    new_code_cell("def my_double(x):\n    return None  # your code here"),
    new_code_cell("ah.checks.check_double(my_double)"),
    new_code_cell("ah.checks.check_double(lambda x: x)  # a worked example of a miss"),
    new_code_cell("row = np.array([1.0, 2.0])\nprint(row)\ntotal = None  # your answer"),
    new_code_cell("ah.checks.check_total(total, row)"),
]


@pytest.fixture
def made(tmp_path, course_maker):
    solutions = tmp_path / "nb99.py"
    solutions.write_text(SOLUTIONS)
    path = tmp_path / "99_doubling.ipynb"
    nbformat.write(new_notebook(cells=CELLS), path)
    nb, count = course_maker.source_notebook(path, solutions)
    return nb, count


def by_id(nb):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells}


def test_stub_split_keeps_data_apart_from_the_answer(course_maker):
    data, answer, names = course_maker.stub_split("a = 1\n# the answer:\nx = None  # your code here")
    assert (data, answer, names) == ("a = 1", "# the answer:\nx = None  # your code here", {"x"})
    assert course_maker.stub_split("x = None\ny = 2") is None  # None without a comment is no stub
    assert course_maker.stub_split("%timeit f()") is None


def test_solution_brings_what_it_needs_and_not_what_the_notebook_has(tmp_path, course_maker):
    solutions = tmp_path / "nb99.py"
    solutions.write_text(SOLUTIONS)
    source = course_maker.solution_source(solutions, {"my_double"}, {"np"})
    assert source == ("SCALE = 2.0\n\ndef _double(x):\n    return SCALE * x\n\n"
                      "def my_double(x):\n    return _double(x)")
    assert "row =" not in source
    assert course_maker.solution_source(solutions, {"total"}, {"np", "row"}) == "total = row.sum()"
    with pytest.raises(SystemExit, match="defines no missing"):
        course_maker.solution_source(solutions, {"missing"}, set())


def test_every_cell_gets_its_nbgrader_role(made):
    nb, count = made
    assert count == 2
    cells = by_id(nb)
    assert all(c.metadata["nbgrader"]["schema_version"] == 3 for c in nb.cells)
    answer = cells["answer-check_double"].metadata["nbgrader"]
    assert answer["solution"] and not answer["grade"] and not answer["locked"]
    test = cells["check_double"].metadata["nbgrader"]
    assert test["grade"] and test["locked"] and test["points"] == 1 and not test["solution"]
    assert cells["check_double"].source == "display(ah.checks.check_double(my_double))"
    others = [c for c in nb.cells if not c.metadata["nbgrader"]["grade"]
              and not c.metadata["nbgrader"]["solution"]]
    assert all(c.metadata["nbgrader"]["locked"] for c in others)
    assert len(nb.cells) == len(CELLS) + 2  # the grading cell and one data cell


def test_grading_is_turned_on_right_after_the_setup_cell(made):
    nb, _ = made
    assert nb.cells[1].source.startswith("import numpy")
    assert nb.cells[2].source.startswith("ah.checks.grading(True)")


def test_a_check_without_an_answer_runs_ungraded(made):
    nb, _ = made
    (demo,) = [c for c in nb.cells if "lambda x: x" in c.source]
    assert not demo.metadata["nbgrader"]["grade"]
    assert demo.source == ("with ah.checks.grading(False):  # a worked example: this check fails on purpose\n"
                           "    display(ah.checks.check_double(lambda x: x))  # a worked example of a miss")


def test_the_answer_keeps_its_stub_above_the_solution_and_the_data_is_locked(made):
    nb, _ = made
    cells = by_id(nb)
    assert cells["check_total-data"].source == "row = np.array([1.0, 2.0])\nprint(row)"
    assert cells["answer-check_total"].source == (
        "total = None  # your answer\n### BEGIN SOLUTION\ntotal = row.sum()\n### END SOLUTION")
    double = cells["answer-check_double"].source
    assert double.startswith("def my_double(x):\n    return None  # your code here\n### BEGIN SOLUTION\n")
    # what nbgrader releases (the region replaced by the empty code stub) is the course's own stub
    released = double.split("### BEGIN SOLUTION")[0]
    assert released.strip() == CELLS[2].source
    namespace = {}
    exec(double.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""), namespace)
    assert namespace["my_double"](3.0) == 6.0  # the solution comes last, so it is the one defined


def test_no_outputs_in_the_source_version(made):
    nb, _ = made
    assert all(c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("cells", [
    [new_code_cell("x = None  # your code here\nah.checks.check_x(x)")],       # stub and check in one cell
    [new_code_cell("x = None  # your code here"), new_code_cell("y = 2"),
     new_code_cell("ah.checks.check_x(x)")],                                 # a cell between them
    [new_code_cell("x = None  # your code here")],                           # no check at all
])
def test_a_stub_that_would_go_ungraded_is_refused(course_maker, cells):
    with pytest.raises(ValueError, match="holds a stub"):
        course_maker.exercises(new_notebook(cells=cells))

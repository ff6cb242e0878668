"""scripts/make_nbgrader_course.py on a tiny made-up notebook, and the autograder's verdict
against cheating answers in this process: fast, without nbgrader (tests/test_grading.py runs
the real course through nbgrader)."""

import functools
import re
import sys
import types

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import attention_helpers as ah
from scripts import make_nbgrader_course as COURSE_MAKER
from scripts import nbgrader_autograder as autograder
from tools.notebooks import ROOT

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
    new_markdown_cell("## In your own words\n\n**Explain.** Why double?"),
    new_markdown_cell("## Exercises\n\nWrite `my_double(x)` without `ah.double`."),
    new_code_cell("def my_double(x):\n    return None  # your code here",
                  metadata={"attention_math": {"forbids": ["double"]}}),
    new_code_cell("ah.checks.check_double(my_double)"),
    new_code_cell("ah.checks.check_double(lambda x: x)  # a worked example of a miss"),
    new_code_cell("row = np.array([1.0, 2.0])\nprint(row)\ntotal = None  # your answer"),
    new_code_cell("ah.checks.check_total(total, row)"),
]


POINTS = {"99_doubling": {"check_double": 2, "check_total": 1, "written": 3}}


@pytest.fixture
def made(tmp_path, course_maker):
    solutions = tmp_path / "nb99.py"
    solutions.write_text(SOLUTIONS)
    path = tmp_path / "99_doubling.ipynb"
    nbformat.write(new_notebook(cells=CELLS), path)
    nb, count = course_maker.source_notebook(path, solutions, POINTS)
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
    assert test["grade"] and test["locked"] and test["points"] == 2 and not test["solution"]
    assert cells["check_total"].metadata["nbgrader"]["points"] == 1
    shown, hidden = cells["check_double"].source.split("\n", 1)
    assert shown == "display(ah.checks.check_double(my_double))"
    assert hidden.startswith("### BEGIN HIDDEN TESTS") and hidden.endswith("### END HIDDEN TESTS")
    assert "'ah.checks.check_double(my_double)', ['my_double'], forbidden=['double']" in hidden
    assert "return _double(x)" not in hidden  # the reference is packed, not legible at a glance
    written = cells["written"]
    assert written.cell_type == "markdown" and written.metadata["nbgrader"] == {
        "grade": True, "grade_id": "written", "locked": False, "schema_version": 3, "solution": True,
        "points": 3}
    assert nb.cells[nb.cells.index(written) - 1].source.startswith("## In your own words")
    others = [c for c in nb.cells if not c.metadata["nbgrader"]["grade"]
              and not c.metadata["nbgrader"]["solution"]]
    assert all(c.metadata["nbgrader"]["locked"] for c in others)
    assert len(nb.cells) == len(CELLS) + 2  # the written answer and one data cell


def test_no_cell_switches_grading_mode(made):
    nb, _ = made
    assert not any("grading(" in c.source for c in nb.cells)


def test_a_check_without_an_answer_is_shown_not_graded(made):
    nb, _ = made
    (demo,) = [c for c in nb.cells if "lambda x: x" in c.source]
    assert not demo.metadata["nbgrader"]["grade"]
    assert demo.source == "display(ah.checks.check_double(lambda x: x))  # a worked example of a miss"


def test_a_check_with_no_points_is_refused_by_name(tmp_path, course_maker):
    solutions = tmp_path / "nb99.py"
    solutions.write_text(SOLUTIONS)
    path = tmp_path / "99_doubling.ipynb"
    nbformat.write(new_notebook(cells=CELLS), path)
    with pytest.raises(ValueError, match=r"no points for check_total of 99_doubling: add `check_total = 1`"):
        course_maker.source_notebook(path, solutions, {"99_doubling": {"check_double": 1, "written": 1}})


def test_points_file_covers_every_exercise_notebook(course_maker):
    points = course_maker.load_points()
    for path in course_maker.exercise_notebooks():
        nb = nbformat.read(path, as_version=4)
        for answer, _, name in course_maker.exercises(nb):
            if answer is not None:
                assert course_maker.points_of(points, path.stem, name) > 0


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
    assert released.strip() == CELLS[4].source
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


# ---- the verdict of a hidden test, in this process ------------------------------------------

REFERENCE = COURSE_MAKER.pack(
    "def my_softmax(S):\n    e = np.exp(S - S.max(axis=-1, keepdims=True))\n"
    "    return e / e.sum(axis=-1, keepdims=True)")
CALL = "ah.checks.check_stable_softmax(my_softmax)"


def namespace(my_softmax):
    return {"ah": ah, "np": np, "my_softmax": my_softmax}


def stable(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_packed_reference_unpacks_to_itself():
    assert autograder.unpack(COURSE_MAKER.pack("x = 1  # é")) == "x = 1  # é"


def test_the_verdict_passes_a_right_answer():
    autograder.verdict(namespace(stable), ROOT, CALL, ["my_softmax"], reference=REFERENCE,
                       forbidden=["softmax"])


def test_the_verdict_ignores_grading_switches_and_replaced_checkers(monkeypatch):
    monkeypatch.setenv("ATTENTION_GRADING", "0")
    def passes(fn):
        return ah.checks.Check(True, "right", "ok")
    monkeypatch.setattr(ah.checks, "check_stable_softmax", passes)
    monkeypatch.setattr(ah.checks.nb04, "check_stable_softmax", passes)
    monkeypatch.setattr(ah.checks.Check, "__bool__", lambda self: True)
    with ah.checks.grading(False), pytest.raises(AssertionError, match="Not yet: .*empty"):
        autograder.verdict(namespace(lambda S: None), ROOT, CALL, ["my_softmax"], reference=REFERENCE)


def test_the_verdict_rechecks_on_inputs_the_student_never_saw():
    seen = set()

    def record(S):
        seen.add(S.tobytes())
        return stable(S)
    ah.checks.check_stable_softmax(record)

    def memorised(S):
        return stable(S) if S.tobytes() in seen else np.zeros_like(S)
    assert ah.checks.check_stable_softmax(memorised).ok  # the visible check is fooled
    with pytest.raises(AssertionError, match="different answer on other inputs"):
        autograder.verdict(namespace(memorised), ROOT, CALL, ["my_softmax"], reference=REFERENCE)


def test_the_verdict_enforces_a_forbidden_helper():
    def uses_the_helper(S):
        return ah.softmax(S)
    with pytest.raises(AssertionError, match="uses softmax"):
        autograder.verdict(namespace(uses_the_helper), ROOT, CALL, ["my_softmax"], reference=REFERENCE,
                           forbidden=["softmax"])
    renamed = ah.softmax  # bound under another name before the check

    def hides_the_helper(S):
        return renamed(S)
    with pytest.raises(AssertionError, match="uses softmax"):
        autograder.verdict(namespace(hides_the_helper), ROOT, CALL, ["my_softmax"], reference=REFERENCE,
                           forbidden=["softmax"])


def test_the_verdict_stops_a_call_to_a_forbidden_helper_it_cannot_see():
    def looks_it_up(S):
        return getattr(ah, "soft" + "max")(S)
    with pytest.raises(AssertionError, match="not allowed in this exercise"):
        autograder.verdict(namespace(looks_it_up), ROOT, CALL, ["my_softmax"], reference=REFERENCE,
                           forbidden=["softmax"])


# Answers that reach ah.softmax by no name the code shows: the function bound before the check
# (a partial, a default argument), or whichever copy of it in sys.modules runs.
row_softmax = functools.partial(getattr(ah, "soft" + "max"), axis=-1)


def through_a_partial(S):
    return row_softmax(S)


def through_a_default(S, tool=getattr(ah, "soft" + "max")):  # noqa: B008 (bound once: the trick)
    return tool(S)


def through_any_copy(S):
    for module in [m for n, m in list(sys.modules.items()) if "attention_helpers" in n]:
        try:
            return getattr(module, "soft" + "max")(S)
        except Exception:
            continue
    raise LookupError("no copy of softmax would run")


@pytest.mark.parametrize("answer", [through_a_partial, through_a_default, through_any_copy],
                         ids=lambda f: f.__name__)
def test_the_verdict_stops_a_forbidden_helper_reached_by_no_name(answer):
    assert ah.checks.check_stable_softmax(answer).ok  # right, where the helper is allowed
    with pytest.raises(AssertionError, match="not allowed in this exercise|raised LookupError"):
        autograder.verdict(namespace(answer), ROOT, CALL, ["my_softmax"], reference=REFERENCE,
                           forbidden=["softmax"])
    assert ah.checks.check_stable_softmax(answer).ok  # and the helper works again afterwards
    assert not [name for name in sys.modules if name.startswith("_graded_")]  # no private copy left


def test_the_recheck_stops_the_forbidden_helper_too():
    # right on the check's own inputs (recorded with the helper before the check), the helper elsewhere
    seen = {}

    def record(S):
        seen[S.tobytes()] = ah.softmax(S)
        return seen[S.tobytes()]
    ah.checks.check_stable_softmax(record)

    def memorised(S):
        return seen[S.tobytes()] if S.tobytes() in seen else getattr(ah, "soft" + "max")(S)
    with pytest.raises(AssertionError, match="raised an error on every input"):
        autograder.verdict(namespace(memorised), ROOT, CALL, ["my_softmax"], reference=REFERENCE,
                           forbidden=["softmax"])


def test_the_recheck_redraws_arrays_inside_dicts_and_numbers_of_number_functions():
    rng = np.random.default_rng(0)
    table = {"cat": np.array([1.0, 2.0]), "sat": np.array([0.5, 0.5])}
    new = autograder._redraw((["cat", "sat"], table), rng, ints=False)
    assert new[0] == ["cat", "sat"] and set(new[1]) == {"cat", "sat"}
    assert not np.allclose(new[1]["cat"], table["cat"])
    assert autograder._redraw((3, 8, 2), rng, ints=False) == (3, 8, 2)
    assert autograder._redraw((3, 8, 2), np.random.default_rng(1), ints=True) != (3, 8, 2)


def test_a_memorised_function_of_numbers_only_is_caught():
    reference = COURSE_MAKER.pack("def my_kv_head(h, h_q, h_kv):\n    return h // (h_q // h_kv)")
    seen = set()

    def record(i, h_q, h_kv):
        seen.add((i, h_q, h_kv))
        return i // (h_q // h_kv)
    ah.checks.check_kv_head(record)

    def memorised(i, h_q, h_kv):
        return i // (h_q // h_kv) if (i, h_q, h_kv) in seen else 0
    call = "ah.checks.check_kv_head(my_kv_head)"
    with pytest.raises(AssertionError, match="different answer on other inputs"):
        autograder.verdict({"ah": ah, "my_kv_head": memorised}, ROOT, call, ["my_kv_head"],
                           reference=reference)
    autograder.verdict({"ah": ah, "my_kv_head": record}, ROOT, call, ["my_kv_head"], reference=reference)


# How an exercise's text forbids a helper: "without `ah.padding_mask`", "not `ah.softmax`",
# "without calling\n`ah.apply_rope`" (a line may break inside the phrase).
FORBIDS_IN_PROSE = re.compile(r"\b(?:without|not)\s+(?:using\s+|calling\s+)?`ah\.(\w+)`")


def test_every_exercise_that_forbids_a_helper_declares_it_where_the_grader_reads_it(exercise_notebooks):
    """The grader enforces what the answer cell's metadata declares, not what the prose says:
    every helper the exercise's text forbids is declared there, every declared one is named in
    the text (a student is told), and each is a helper of the package."""
    checked = 0
    for path in exercise_notebooks:
        nb = nbformat.read(path, as_version=4)
        for answer, _, name in COURSE_MAKER.exercises(nb):
            if answer is None:
                continue
            prose, k = "", answer - 1
            while k >= 0 and nb.cells[k].cell_type == "markdown":  # the exercise's text above its cell
                prose, k = nb.cells[k].source + "\n" + prose, k - 1
            said = set(FORBIDS_IN_PROSE.findall(prose))
            declared = set(COURSE_MAKER.forbidden_helpers(nb, answer))
            assert said == declared, f"{path.name}, {name}: the text forbids {said}, the metadata {declared}"
            # a function of the package, and no closure: the grader refuses it by swapping the
            # function's code, which Python allows only between codes of the same free variables
            assert all(isinstance(getattr(ah, helper, None), types.FunctionType)
                       and not getattr(ah, helper).__code__.co_freevars for helper in declared), (
                path.name, declared)
            checked += bool(declared)
    assert checked >= 9  # 01, 03, 04, 05, 05b (two), 07, 10, 11


# ---- nbgrader_config.py, which the generator rewrites, and teacher_config.py, which it never writes --

# nbgrader_config.py as the generator wrote it before it loaded teacher_config.py
WRITTEN_BEFORE = """\
# nbgrader configuration of the attention-math course (written by scripts/make_nbgrader_course.py).
c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "attention-math"
# The answer cells keep the notebook's own stub (`None  # your code here`) above the
# solution region, so the region is replaced by nothing.
c.ClearSolutions.code_stub = {"python": ""}
# Some cells draw figures; a loaded machine needs more than nbgrader's 30 s default.
c.Execute.timeout = 300
# The feedback shows each test cell without its hidden test (which carries the reference solution).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
"""
PENALTY = 'c.LateSubmissionPlugin.penalty_method = "zero"'


def test_regenerating_neither_writes_nor_deletes_the_teachers_file(tmp_path):
    COURSE_MAKER.write_course(tmp_path, [])
    assert not (tmp_path / "teacher_config.py").exists()  # the teacher makes it, not the generator
    theirs = f"c = get_config()\n{PENALTY}\n"
    (tmp_path / "teacher_config.py").write_text(theirs)
    COURSE_MAKER.write_course(tmp_path, [])
    COURSE_MAKER.write_course(tmp_path, [])
    assert (tmp_path / "teacher_config.py").read_text() == theirs
    assert 'load_subconfig("teacher_config.py")' in (tmp_path / "nbgrader_config.py").read_text()


@pytest.mark.parametrize("line, added", [("", PENALTY),
                                         ("c.Execute.timeout = 300", "c.Execute.timeout = 600")],
                         ids=["a-line-added", "a-value-changed"])
def test_settings_added_to_nbgrader_config_stop_the_generator_before_it_writes(tmp_path, line, added):
    COURSE_MAKER.write_course(tmp_path, [])
    config = tmp_path / "nbgrader_config.py"
    written = config.read_text()
    edited = written.replace(line, added) if line else f"{written}{added}\n"
    assert edited != written
    config.write_text(edited)
    with pytest.raises(SystemExit) as stopped:
        COURSE_MAKER.write_course(tmp_path, [])
    message = str(stopped.value)
    assert f"    {added}\n" in message and "teacher_config.py" in message and "Nothing was written" in message
    assert config.read_text() == edited


@pytest.mark.parametrize("before", [WRITTEN_BEFORE, WRITTEN_BEFORE.replace("# Some", "# My note.\n# Some")],
                         ids=["as-written", "a-comment-added"])
def test_a_config_the_generator_wrote_before_is_rewritten(tmp_path, before):
    (tmp_path / "nbgrader_config.py").write_text(before)
    COURSE_MAKER.write_course(tmp_path, [])
    rewritten = (tmp_path / "nbgrader_config.py").read_text()
    assert rewritten != before and 'load_subconfig("teacher_config.py")' in rewritten
    COURSE_MAKER.write_course(tmp_path, [])  # and what it writes now, again
    assert (tmp_path / "nbgrader_config.py").read_text() == rewritten


def test_a_forbids_entry_that_is_not_a_list_of_names_is_refused(course_maker):
    nb = new_notebook(cells=[new_code_cell("x = None  # your answer",
                                           metadata={"attention_math": {"forbids": "softmax"}})])
    with pytest.raises(ValueError, match="attention_math.forbids must be a list"):
        course_maker.forbidden_helpers(nb, 0)

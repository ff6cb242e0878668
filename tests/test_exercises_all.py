"""What holds for the exercises of every notebook, found the way the nbgrader
generator finds them: a check cell calls ah.checks.check_..., and the code cell
right before it holds the stubs (`None` followed by a comment)."""

import ast

import pytest

from scripts import make_nbgrader_course as COURSE_MAKER
from tools.notebooks import ROOT, ids, read

EXERCISE_NOTEBOOKS = COURSE_MAKER.exercise_notebooks()

# computations a stub may not contain: the answer is the learner's to write
COMPUTING = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript, ast.Compare,
             ast.BoolOp, ast.Lambda, ast.ListComp, ast.DictComp, ast.GeneratorExp)


def computation(source: str):
    """The first thing in `source` that computes or states a value other than None, or None."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, COMPUTING):
            return ast.unparse(node)
        if isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, str):
            return repr(node.value)
    return None


def number(path) -> str:
    """A notebook's number as its solutions module names it: "03", "05b"."""
    return path.stem.split("_")[0]


def answers(path):
    """[(answer source, names it binds, checker name)] of a notebook's graded exercises."""
    nb = read(path)
    found = []
    for answer, _, checker in COURSE_MAKER.exercises(nb):
        if answer is not None:
            _, source, names = COURSE_MAKER.stub_split(nb.cells[answer].source)
            found.append((source, names, checker))
    return found


def test_every_exercise_is_found():
    # the core path's 21 exercises (05's multi-head and padding ones now in 05b); other
    # notebooks may only add to it
    counts = {number(p): len(answers(p)) for p in EXERCISE_NOTEBOOKS}
    assert {k: v for k, v in counts.items() if k <= "06"} == {
        "00": 3, "01": 3, "02": 3, "03": 2, "04": 3, "05": 2, "05b": 2, "06": 3}


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=ids(EXERCISE_NOTEBOOKS))
def test_notebook_holds_no_solution(path):
    solutions = ROOT / "solutions" / f"nb{number(path)}.py"
    nb = read(path)
    for source, _, checker in answers(path):
        assert computation(source) is None, f"{checker}: the stub holds {computation(source)}"
    # and no statement of a reference answer (with what it needs that the notebook does not
    # define) appears anywhere in the notebook
    reference = set()
    for _, names, _ in answers(path):
        source = COURSE_MAKER.solution_source(solutions, names, COURSE_MAKER.notebook_names(nb.cells))
        reference |= {ast.dump(node) for node in ast.parse(source).body}
    for cell in nb.cells:
        tree = COURSE_MAKER.parse(cell.source) if cell.cell_type == "code" else None
        for node in tree.body if tree else []:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            assert ast.dump(node) not in reference, \
                f"{path.name} holds a statement of {solutions.name}: {ast.unparse(node)[:80]}"


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=ids(EXERCISE_NOTEBOOKS))
def test_solutions_answer_every_exercise(path):
    solutions = ROOT / "solutions" / f"nb{number(path)}.py"
    assert solutions.exists(), f"{path.name} has exercises but no {solutions.name}"
    for _, names, checker in answers(path):
        source = COURSE_MAKER.solution_source(solutions, names, set())
        assert all(name in source for name in names), checker


@pytest.mark.parametrize("stub, computes", [
    ("x = None  # your code here", False),
    ('d = {"a": None,  # your answer\n     "b": None}', False),
    ("def f(x):\n    return None  # your code here", False),
    ("def f(x):\n    y = None  # your code here\n    return y", False),
    ("x = 2 * 3  # your code here", True),
    ("def f(x):\n    return x @ x  # your code here", True),
    ("x = (3, 4)  # your answer", True),
])
def test_the_no_solution_rule_can_fail(stub, computes):
    assert (computation(stub) is not None) == computes

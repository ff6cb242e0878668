"""Write an nbgrader course from the notebooks and the reference solutions.

    python -m scripts.make_nbgrader_course OUT_DIR                     # every notebook
    python -m scripts.make_nbgrader_course OUT_DIR notebooks/04_softmax.ipynb
    cd OUT_DIR && nbgrader generate_assignment 04_softmax

OUT_DIR gets nbgrader_config.py and, per notebook, one assignment named after
its stem: source/<stem>/<stem>.ipynb, with a copy of attention_helpers and of
scripts/nbgrader_autograder.py (as attention_autograder.py) beside it (nbgrader
releases them with the notebook and puts the course's copies back before it
grades). The notebooks, solutions/ and teachers/points.toml are only read.

The teacher's own nbgrader settings (the late penalty, zip_collect's file names) go in
OUT_DIR/teacher_config.py, which nbgrader_config.py loads last (so they win) and this
script never writes or deletes: regenerating the course keeps them in force. An
nbgrader_config.py that holds settings this script did not write (the old way to add
them) is not overwritten: the script stops, names those lines and says where they go.

How the cells are recognised, so that new exercises and notebooks need no
change here:
- a check cell is a code cell that calls `ah.checks.check_...`;
- its answer cell is the code cell right before it, if that cell holds a
  stub: `None` followed by a comment on the same line (`return None  # your
  code here`, `shape_X = None  # your answer`). The statements that hold
  stubs are the answer; statements above them (the exercise's data) move to
  a read-only cell of their own, so a submission cannot change the data it
  is checked on;
- a check cell with no answer cell right before it is a worked example (a
  check that fails on purpose): it runs with grading off and is not graded.

In each source notebook the answer cell keeps the notebook's own stub and gets
the reference solution below it, between `### BEGIN SOLUTION` and
`### END SOLUTION`; the code stub in nbgrader_config.py is empty, so the
released notebook shows the stub exactly as the course does. The solution for
a stub that binds NAME is the statement of solutions/nbNN.py that binds NAME,
with the statements of that file it needs and the notebook does not define.
Each check cell becomes a locked autograder test worth its points in
teachers/points.toml: what the student sees is the notebook's own check (its
value shown with display(), as nbgrader would read a returned value as a score);
the verdict is a hidden test (`### BEGIN HIDDEN TESTS`) that no answer cell can
switch off: it loads a fresh private copy of the checks, asserts on the
structured result, re-checks a function on inputs the student never saw against
the reference solution, and enforces each helper the exercise forbids, which its
answer cell declares in its metadata (`"attention_math": {"forbids": ["padding_mask"]}`;
tests/test_make_nbgrader_course.py checks that every exercise whose text says
"without `ah.…`" or "not `ah.…`" declares it); see scripts/nbgrader_autograder.py. Each "In your own
words" section gets a manually graded answer cell worth its `written` points.
Every other cell is read-only.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import re
import shutil
import sys
import zlib
from pathlib import Path

import nbformat

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
POINTS_FILE = ROOT / "teachers" / "points.toml"
AUTOGRADER_SOURCE = Path(__file__).with_name("nbgrader_autograder.py")  # copied beside each notebook
AUTOGRADER = "attention_autograder.py"  # its name there
STUB = re.compile(r"\bNone\b,?\s*#")
CHECK = re.compile(r"\bah\.checks\.(check_\w+)\(")
WRITTEN = re.compile(r"^##\s+In your own words", re.M)
HIDDEN = """\
### BEGIN HIDDEN TESTS
# The grade (scripts/nbgrader_autograder.py): a fresh private copy of the checks, not ah.checks.
__tracebackhide__ = True  # IPython: a failure's traceback shows the hint, not this cell (and its reference)
import pathlib as _grading_path
_grading_folder = _grading_path.Path.cwd()
_grader = {{"__name__": "_attention_autograder"}}  # run from its file, into a namespace of its own
exec(compile((_grading_folder / {file!r}).read_text(), {file!r}, "exec"), _grader)
_grader["verdict"](globals(), _grading_folder, {call!r}, {answers!r}, forbidden={forbidden!r},
                   seed={seed}, reference={reference!r})
### END HIDDEN TESTS"""
WRITTEN_STUB = "YOUR ANSWER HERE"
CONFIG = '''\
# nbgrader configuration of the attention-math course, written by scripts/make_nbgrader_course.py
# each time it runs. Your own settings go in teacher_config.py (see the end of this file).
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
# The teacher's own settings (the late penalty, zip_collect's file names): teacher_config.py beside
# this file, which the generator never writes. Loaded last, so they win; no such file, no settings.
load_subconfig("teacher_config.py")  # noqa: F821 (nbgrader provides it)
'''
TEACHER_CONFIG = "teacher_config.py"
FINGERPRINT = "# fingerprint {}: the generator rewrites this file only while the settings below are its own\n"


def load_points(path: Path = POINTS_FILE) -> dict:
    """{notebook stem: {checker name or "written": points}} from teachers/points.toml."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def points_of(points: dict, stem: str, key: str) -> float:
    try:
        value = points[stem][key]
    except KeyError:
        raise ValueError(f"{POINTS_FILE.relative_to(ROOT)} gives no points for {key} of {stem}: "
                         f"add `{key} = 1` under [{stem}]") from None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"points for {key} of {stem} must be a positive number, got {value!r}")
    return value


def forbidden_helpers(nb, answer: int) -> list[str]:
    """The helpers (names in `ah`) that the answer cell's metadata says the exercise forbids."""
    names = nb.cells[answer].metadata.get("attention_math", {}).get("forbids", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ValueError(f"cell {answer}: attention_math.forbids must be a list of helper names, "
                         f"got {names!r}")
    return sorted(set(names))


def hidden_test(call: str, answers, reference: str, forbidden, grade_id: str) -> str:
    return HIDDEN.format(file=AUTOGRADER, call=call, answers=sorted(answers), forbidden=forbidden,
                         seed=zlib.crc32(grade_id.encode()) % 10_000,
                         reference=pack(reference))


def pack(source: str) -> str:
    """A reference solution as the hidden test carries it (nbgrader_autograder.unpack reads it):
    not legible at a glance in a traceback."""
    return base64.b64encode(zlib.compress(source.encode())).decode()


def meta(grade_id, *, grade=False, solution=False, locked=False, points=None) -> dict:
    """The nbgrader metadata of one cell (schema 3)."""
    data = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution}
    if points is not None:
        data["points"] = points
    return data


# ---- reading the notebook ---------------------------------------------------------

def parse(source: str):
    try:
        return ast.parse(source)
    except SyntaxError:  # IPython magics or shell lines: no names we can use
        return None


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # set apart by a blank line


def bound_names(node) -> set[str]:
    """Names a top-level statement binds (not looking inside functions or classes)."""
    names = set()
    if isinstance(node, DEFINITIONS):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
    return names


def used_names(node) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def stub_split(source: str):
    """(data, answer, names) for an answer cell: the source before the first statement that
    holds a stub, the rest, and the names the stub statements bind; None if there is no stub."""
    tree = parse(source)
    if tree is None or not tree.body:
        return None
    lines = source.split("\n")
    stubbed = [node for node in tree.body
               if any(STUB.search(line) for line in lines[node.lineno - 1:node.end_lineno])]
    if not stubbed:
        return None
    first = stubbed[0].lineno - 1
    while first > 0 and lines[first - 1].lstrip().startswith("#"):  # keep a comment with its stub
        first -= 1
    names = set().union(*(bound_names(node) for node in stubbed))
    return "\n".join(lines[:first]).rstrip("\n"), "\n".join(lines[first:]), names


def exercises(nb):
    """[(answer cell index or None, check cell index, checker name)] in notebook order.

    A stub anywhere else (in a check cell, or in a cell that is not right before a
    check cell) is refused: that exercise would silently go ungraded.
    """
    found, previous_code = [], None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        match = CHECK.search(cell.source)
        if match:
            answer = previous_code if previous_code is not None and stub_split(
                nb.cells[previous_code].source) else None
            found.append((answer, index, match.group(1)))
        previous_code = index
    answers = {answer for answer, _, _ in found}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and index not in answers and stub_split(cell.source):
            raise ValueError(f"cell {index} holds a stub (None followed by a comment) but is not the "
                             f"code cell right before a check cell:\n{cell.source}")
    return found


def notebook_names(cells) -> set[str]:
    names = set()
    for cell in cells:
        tree = parse(cell.source) if cell.cell_type == "code" else None
        for node in tree.body if tree else []:
            names |= bound_names(node)
    return names


# ---- reading the solutions --------------------------------------------------------

def solution_source(solutions: Path, names: set[str], defined: set[str]) -> str:
    """The statements of `solutions` that bind `names`, with those they need that are not
    in `defined` (the notebook's names before the answer), in file order."""
    text = solutions.read_text()
    body = ast.parse(text).body
    binders = {}
    for node in body:
        for name in bound_names(node):
            binders.setdefault(name, node)  # the first binding, as a reader meets it
    missing = sorted(names - binders.keys())
    if missing:
        raise SystemExit(f"{solutions.name} defines no {', '.join(missing)}: add the reference "
                         "solution there")
    wanted, todo = set(), [binders[name] for name in names]
    while todo:
        node = todo.pop()
        if id(node) in wanted:
            continue
        wanted.add(id(node))
        for name in used_names(node) - defined - names:
            if name in binders:
                todo.append(binders[name])
    parts, previous = [], None
    for node in (node for node in body if id(node) in wanted):
        if parts:
            apart = isinstance(node, DEFINITIONS) or isinstance(previous, DEFINITIONS)
            parts.append("\n\n" if apart else "\n")
        parts.append(ast.get_source_segment(text, node))
        previous = node
    return "".join(parts)


# ---- writing the course -------------------------------------------------------------

def source_notebook(path: Path, solutions: Path, points: dict | None = None):
    """The nbgrader source version of one notebook, and its number of graded exercises."""
    points = load_points() if points is None else points
    nb = nbformat.read(path, as_version=4)
    found = exercises(nb)
    answers = {answer: (check, name) for answer, check, name in found if answer is not None}
    checks = {check: (answer, name) for answer, check, name in found}
    setup = next((i for i, c in enumerate(nb.cells)
                  if c.cell_type == "code" and "import attention_helpers as ah" in c.source), None)
    if found and setup is None:
        raise ValueError("no setup cell imports attention_helpers as ah")
    cells, used_ids, references = [], set(), {}

    def add(cell, grade_id, **kwargs):
        base, k = grade_id, 2
        while grade_id in used_ids:
            grade_id, k = f"{base}-{k}", k + 1
        used_ids.add(grade_id)
        cell.metadata["nbgrader"] = meta(grade_id, **kwargs)
        if cell.cell_type == "code":  # a source version carries no outputs
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)

    for index, original in enumerate(nb.cells):
        cell = nbformat.from_dict(dict(original))
        cell.metadata = dict(original.metadata)
        if index in answers:
            _, name = answers[index]
            data, answer, names = stub_split(cell.source)
            if data.strip():
                add(nbformat.v4.new_code_cell(data), f"{name}-data", locked=True)
            defined = notebook_names(nb.cells[:index]) | notebook_names([nbformat.v4.new_code_cell(data)])
            solution = solution_source(solutions, names, defined)
            references[index] = (names, solution, forbidden_helpers(nb, index))
            cell.source = f"{answer.rstrip()}\n### BEGIN SOLUTION\n{solution}\n### END SOLUTION"
            add(cell, f"answer-{name}", solution=True)
        elif index in checks and checks[index][0] is not None:
            answer_index, name = checks[index]
            names, solution, forbidden = references[answer_index]
            call = check_call(cell.source)
            cell.source = f"{displayed(cell.source)}\n{hidden_test(call, names, solution, forbidden, name)}"
            add(cell, name, grade=True, locked=True, points=points_of(points, path.stem, name))
        elif index in checks:  # a worked example that fails on purpose: shown, not graded
            cell.source = displayed(cell.source)
            add(cell, f"cell-{index}", locked=True)
        else:
            add(cell, f"cell-{index}", locked=True)
        if cell.cell_type == "markdown" and WRITTEN.search(cell.source) and found:
            written = nbformat.v4.new_markdown_cell(WRITTEN_STUB)
            add(written, "written", grade=True, solution=True, points=points_of(points, path.stem, "written"))
    nb.cells = cells
    return nb, len([a for a, _, _ in found if a is not None])


def displayed(source: str) -> str:
    """`source` with its last line's value shown by display() instead of returned.

    nbgrader reads a test cell's returned value as a partial score; the text of a
    passed check is not a number, so it is displayed instead (and looks the same).
    """
    tree = parse(source)
    lines = source.rstrip("\n").split("\n")
    if not (tree and tree.body and isinstance(tree.body[-1], ast.Expr)):
        return "\n".join(lines)
    last = tree.body[-1]
    before = lines[last.lineno - 1][:last.col_offset]
    after = lines[last.end_lineno - 1][last.end_col_offset:]  # a comment after the call stays after it
    shown = f"{before}display({ast.get_source_segment(source, last)}){after}"
    return "\n".join(lines[:last.lineno - 1] + [shown])


def check_call(source: str) -> str:
    """The `ah.checks.check_...(...)` expression of a check cell, as source text."""
    tree = parse(source)
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.Call) and CHECK.match(ast.get_source_segment(source, node) or ""):
            return ast.get_source_segment(source, node)
    raise ValueError(f"a check cell whose check call cannot be read:\n{source}")


def exercise_notebooks(folder: Path = ROOT / "notebooks") -> list[Path]:
    """Every numbered notebook (00 … 11, 05b too) that holds at least one exercise."""
    found = []
    for path in sorted(folder.glob("[0-9][0-9]*_*.ipynb")):
        try:
            if exercises(nbformat.read(path, as_version=4)):
                found.append(path)
        except ValueError:  # a stub the generator refuses: write_course says so
            found.append(path)
    return found


def fingerprinted(body: str) -> str:
    """`body` after the line by which the generator knows that it wrote it, unchanged."""
    return FINGERPRINT.format(hashlib.sha256(body.encode()).hexdigest()[:16]) + body


def settings(text: str) -> list[str]:
    """The lines of a config that set something: not blank, not comments."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def teachers_lines(text: str) -> list[str]:
    """The settings of an existing nbgrader_config.py that the generator did not write: none if
    it is as some version of the generator wrote it (its fingerprint matches), else those not
    in CONFIG (a course written before the fingerprint has only lines CONFIG still holds)."""
    if text == fingerprinted(text.partition("\n")[2]):
        return []
    ours = set(settings(CONFIG))
    return [line for line in settings(text) if line not in ours]


def write_config(out: Path) -> None:
    """out/nbgrader_config.py, unless the one there holds settings of the teacher's (SystemExit)."""
    config = out / "nbgrader_config.py"
    theirs = teachers_lines(config.read_text()) if config.exists() else []
    if theirs:
        lines = "".join(f"    {line}\n" for line in theirs)
        raise SystemExit(
            f"{config} holds settings this script did not write, and rewriting it would drop them:\n"
            f"{lines}Move them to {out / TEACHER_CONFIG} (nbgrader_config.py loads it, and this script "
            f"never writes it), delete {config}, and run the script again. Nothing was written.")
    config.write_text(fingerprinted(CONFIG))


def write_course(out: Path, notebooks: list[Path], points: dict | None = None) -> dict[str, int]:
    """Write the course into `out`; return {assignment: number of graded exercises}.
    out/teacher_config.py, the teacher's own settings, is neither written nor deleted."""
    points = load_points() if points is None else points
    out.mkdir(parents=True, exist_ok=True)
    write_config(out)
    graded = {}
    for path in notebooks:
        number = path.name.split("_")[0]
        solutions = ROOT / "solutions" / f"nb{number}.py"
        if not solutions.exists():
            raise SystemExit(f"{path.name}: no reference solutions in solutions/nb{number}.py")
        try:
            nb, count = source_notebook(path, solutions, points)
        except ValueError as err:
            raise SystemExit(f"{path.name}: {err}") from None
        folder = out / "source" / path.stem
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / path.name)
        shutil.copytree(ROOT / "attention_helpers", folder / "attention_helpers",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copyfile(AUTOGRADER_SOURCE, folder / AUTOGRADER)
        graded[path.stem] = count
    return graded


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="the nbgrader course folder to write")
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to include (default: every numbered notebook)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or exercise_notebooks()
    for stem, count in write_course(args.out_dir, notebooks).items():
        print(f"{stem}: {count} graded exercise{'s' if count != 1 else ''}")


if __name__ == "__main__":
    sys.exit(main())

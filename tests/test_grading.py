"""The generated nbgrader course round-trips through real nbgrader (markers `grading`, `slow`).

nbgrader runs in its own environment (tools/grading.py). The whole cycle around autograde
(roster, exchange, due date, feedback, export) is tests/test_grading_cycle.py.

Each notebook with exercises gets two hand-ins (each is a notebook run), see TRICKS:
- "reference": the released notebook with the reference solutions: full marks;
- a second student, the reference solutions with one exercise answered wrong, and in the
  first answer cell an attempt to change the verdict from inside the kernel:
  - the wrong answer is one of "mistake" (a typical one, from MISTAKES: the feedback must
    show its hint), "memorised" (a function right only on the inputs the visible check
    uses: it records them by running the check itself first) or "forbidden" (for an
    exercise that forbids a helper, "without `ah.padding_mask`", an answer that calls it);
  - the attempt is "switched_off" (`ah.checks.grading(False)`, ATTENTION_GRADING) or
    "replaced" (every `ah.checks.check_...`, `Check` and the modules in sys.modules
    replaced and wrapped);
  that exercise gets zero and the others keep their points. Had the attempt worked, the
  wrong answer would have passed;
  - or, where a notebook has no such answer, "blank": the released notebook untouched (with
  the attempt, if any, in its first answer cell): zero.

And every exercise that forbids a helper is answered right *with* its helper, reached in
each of nine ways (WAYS: through `ah`, an alias, the module that defines it, an import inside
the function, a functools.partial bound before the check, whichever copy in sys.modules will
run, the grader's own private one included, getattr with a name built at run time, the
package's __dict__ and the defining module imported by name): every exercise every way in this
process, through the grader's own verdict; and through real nbgrader, one more hand-in per
notebook with such exercises, the reference solutions with those answered that way, the six
ways of IN_NBGRADER taken in turn (NBGRADER_WAY), so that every way and every forbidding
exercise goes through real nbgrader at least once. (The grader's refusal is one swap of the
helper's code, the same for every exercise: a hand-in per notebook and way, 48 notebook runs,
was most of this test's time.) Each such exercise gets zero, the others keep their points.
The answers are generated from the notebooks' metadata (attention_math.forbids) and the stub's
signature, and each is checked first to pass the plain checker when nothing forbids the
helper, so a zero means caught.
Points come from teachers/points.toml; the "In your own words" cell is graded by hand,
so autograde gives it nothing. The scores are read from nbgrader's own gradebook.
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pytest

import attention_helpers as ah
from scripts import make_nbgrader_course as COURSE_MAKER
from scripts import nbgrader_autograder as AUTOGRADER
from tools.grading import BIN, grading_env, hand_in, nbgrader
from tools.notebooks import ROOT

EXERCISE_NOTEBOOKS = COURSE_MAKER.exercise_notebooks()  # every one with exercises: 05b, 10, 11 too
POINTS = COURSE_MAKER.load_points()

pytestmark = [pytest.mark.grading, pytest.mark.slow]

# The first answer cell tries to change the verdict from inside the kernel.
SWITCHED_OFF = """\
import os
os.environ["ATTENTION_GRADING"] = "0"
ah.checks.grading(False)
import attention_helpers.checks._base as _base
_base.grading_on = lambda: False
"""
REPLACED = """\
import sys, functools
def _passes(*args, **kwargs):
    return ah.checks.Check(True, "right", "looks right")
for _name in dir(ah.checks):
    if _name.startswith("check_"):
        setattr(ah.checks, _name, _passes)
for _module in [m for n, m in list(sys.modules.items()) if n.startswith("attention_helpers.checks.nb")]:
    for _name in dir(_module):
        if _name.startswith("check_"):
            setattr(_module, _name, functools.wraps(getattr(_module, _name))(_passes))
ah.checks.Check.__bool__ = lambda self: True
sys.modules["attention_helpers.checks"] = ah.checks
"""
# An answer that is right only where the visible check looks: it runs the check once with a
# recorder, then answers the recorded inputs with the reference and everything else with zeros.
MEMORISED = """\
{reference}
_right = {name}
_seen = set()
def _record(*args):
    _seen.add(repr(args))
    return _right(*args)
ah.checks.{checker}(_record)
def {name}(*args):
    if repr(args) in _seen:
        return _right(*args)
    return np.zeros_like(np.asarray(_right(*args), dtype=float))
"""
# ---- forbidden helpers, and the ways an answer can reach one ----------------------------------

def forbidding_exercises() -> dict[str, list[SimpleNamespace]]:
    """{assignment: its exercises that forbid helpers}, from the answer cells' metadata
    (attention_math.forbids): each with its checker, helpers, the stub's function and check call."""
    found = {}
    for path in EXERCISE_NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for answer, check, checker in COURSE_MAKER.exercises(nb):
            helpers = COURSE_MAKER.forbidden_helpers(nb, answer) if answer is not None else []
            if helpers:
                (stub,) = ast.parse(COURSE_MAKER.stub_split(nb.cells[answer].source)[1]).body
                found.setdefault(path.stem, []).append(SimpleNamespace(
                    checker=checker, helpers=helpers, stub=stub,
                    call=COURSE_MAKER.check_call(nb.cells[check].source)))
    return found


FORBIDDING = forbidding_exercises()
# How an answer gets its exercise right with the helper, `{use}`, where that is not
# `return {use}(the function's own arguments)`.
WITH_THE_HELPER = {
    "check_scaled_attention": "return {use}(Q, K, V)[0]",  # the helper returns (output, weights)
    "check_masked_attention": "return {use}(Q, K, V, mask)[0]",
    "check_multi_head": "return {use}(X, W_Q, W_K, W_V, W_O, n_heads)[0]",
    "check_train_step": "Q, K, V = X @ W_Q, X @ W_K, X @ W_V\n"
                        "dQ, dK, dV = {use}(Q, K, V, ah.scaled_dot_product_attention(Q, K, V)[0] - target)\n"
                        "return W_Q - lr * X.T @ dQ, W_K - lr * X.T @ dK, W_V - lr * X.T @ dV",
}
# How the answer reaches the helper: lines before the function, lines at the top of its body, and
# the expression `{use}`. {helper} is the helper's name, {module} the module that defines it;
# {name} is the name as a string built at run time ("soft" + "max"), found by no reading of the code.
PRIVATE_COPY = """\
import sys
def tool(*args):  # each module with "attention_helpers" in its name: the first whose helper runs
    for module in [m for n, m in list(sys.modules.items()) if "attention_helpers" in n]:
        try:
            return getattr(module, {name})(*args)
        except Exception:
            continue
    raise LookupError("no copy of the helper would run")
"""
WAYS = {
    "through_ah": ("", "", "ah.{helper}"),
    "alias": ("import attention_helpers as xyz\n", "", "xyz.{helper}"),
    "defining_module": ("from attention_helpers.{module} import {helper}\n", "", "{helper}"),
    "import_inside": ("", "from attention_helpers.{module} import {helper}\n", "{helper}"),
    "getattr": ("", "", "getattr(ah, {name})"),
    "package_dict": ("import attention_helpers\n", "", "attention_helpers.__dict__[{name}]"),
    "module_by_name": ("import importlib\n", "",
                       'getattr(importlib.import_module("attention_helpers." + "{module}"), {name})'),
    "partial": ("import functools\ntool = functools.partial(getattr(ah, {name}))\n", "", "tool"),
    "private_copy": (PRIVATE_COPY, "", "tool"),
}
# Handed in through real nbgrader: the four ways, and the two that got through there before
# the grader swapped the helper's code (a partial, a copy found in sys.modules). The rest name the
# helper by a string, which the grader's swap meets the same way as `ah.X`: they are checked here,
# in this process, with every other way (test_each_answer_with_a_forbidden_helper_…), at a
# fraction of an autograde's time.
IN_NBGRADER = ["through_ah", "alias", "defining_module", "import_inside", "partial", "private_copy"]
# The way each notebook's forbidding exercises are handed in through real nbgrader: IN_NBGRADER in
# turn, so each way once at least (test_every_way_and_every_forbidding_exercise_…).
NBGRADER_WAY = {assignment: IN_NBGRADER[k % len(IN_NBGRADER)] for k, assignment in enumerate(FORBIDDING)}


def with_helper(exercise, helper: str, way: str) -> str:
    """The answer cell of `exercise` that gets it right with `helper`, reached `way`."""
    before, inside, use = WAYS[way]
    names = {"helper": helper, "module": getattr(ah, helper).__module__.rpartition(".")[2],
             "name": f'"{helper[:4]}" + "{helper[4:]}"'}
    arguments = ", ".join(a.arg for a in exercise.stub.args.args)
    body = WITH_THE_HELPER.get(exercise.checker, f"return {{use}}({arguments})")
    body = inside.format(**names) + body.format(use=use.format(**names))
    signature = ast.unparse(exercise.stub.args)
    return (f"{before.format(**names)}def {exercise.stub.name}({signature}):\n"
            + "".join(f"    {line}\n" for line in body.splitlines()))


def forbidden_hand_ins(assignment: str, reference: dict, ways=IN_NBGRADER) -> dict:
    """{student: answers}: per way (and per helper, where an exercise forbids more than one) the
    reference solutions with every forbidding exercise of `assignment` answered with its helper."""
    exercises = FORBIDDING.get(assignment, [])
    hand_ins = {}
    for way in ways:
        for k in range(max((len(e.helpers) for e in exercises), default=0)):
            hand_ins[way if k == 0 else f"{way}-{k + 1}"] = {**reference, **{
                f"answer-{e.checker}": with_helper(e, e.helpers[min(k, len(e.helpers) - 1)], way)
                for e in exercises}}
    return hand_ins


# The "forbidden" trick of TRICKS: the first exercise that forbids a helper, calling it through ah.
FORBIDDEN = {assignment: (first.checker, with_helper(first, first.helpers[0], "through_ah"))
             for assignment, (first, *_) in FORBIDDING.items()}

# One typical mistake per notebook: the answer it replaces, the wrong answer, a piece of its hint.
MISTAKES = {
    "00_input_matrix": ("check_build_X", "def build_X(sentence, table):\n"
                        "    return np.stack([table[t] for t in sentence]).T",
                        "you stacked the embeddings as columns"),
    "01_qkv_projections": ("check_qkv", "def my_qkv(X, W_Q, W_K, W_V):\n"
                           "    return W_Q @ X, W_K @ X, W_V @ X", "the order of the factors matters"),
    "02_dot_product_scores": ("check_scores", "def my_scores(Q, K):\n    return K @ Q.T",
                              "you returned K @ Q.T"),
    "03_scaling_by_sqrt_dk": ("check_scaled_attention", "def my_attention(Q, K, V):\n"
                              "    return ah.softmax(Q @ K.T) @ V", "you forgot to scale"),
    "04_softmax": ("check_stable_softmax", "def my_softmax(S):\n"
                   "    return np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)", "exp(800) overflows"),
    "05_weighted_sum_and_self_attention": (
        "check_masked_attention", "def my_attention(Q, K, V, mask=None):\n"
        "    return ah.softmax(Q @ K.T / np.sqrt(Q.shape[-1])) @ V", "the mask had no effect"),
    "06_kv_cache_gqa": ("check_kv_head", "def my_kv_head(h, h_q, h_kv):\n    return h % h_kv",
                        "dealt the query heads out in turn"),
    "07_positions_and_rope": (
        "check_rope", "def my_rope(x, positions):\n"
        "    d = x.shape[1]\n"
        "    angle = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)\n"
        "    out = np.empty_like(x)\n"
        "    out[:, 0::2] = x[:, 0::2] * np.cos(angle) + x[:, 1::2] * np.sin(angle)\n"
        "    out[:, 1::2] = -x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)\n"
        "    return out", "you turned clockwise"),
    "08_the_decoder_block": ("check_pre_norm_block", "def my_block(X, attention, ffn, norm):\n"
                             "    h = X + attention(norm(X))\n    return ffn(norm(h))",
                             "the second residual is missing"),
    "09_tiled_attention": ("check_online_update", "def my_online_update(m, row_sum, acc, scores, values):\n"
                           "    m_new = max(m, scores.max())\n"
                           "    p = np.exp(scores - m_new)\n"
                           "    return m_new, row_sum * np.exp(m - m_new) + p.sum(), acc + p @ values",
                           "acc was not rescaled"),
}


# The second hand-in of each assignment: (its wrong answer, the attempt in its first answer cell).
# "memorised" meets "switched_off" only: with the checkers replaced, the recorder would see no input.
TRICKS = {
    "00_input_matrix": ("mistake", "replaced"),
    "01_qkv_projections": ("memorised", "switched_off"),
    "02_dot_product_scores": ("mistake", "switched_off"),
    "03_scaling_by_sqrt_dk": ("forbidden", "switched_off"),
    "04_softmax": ("forbidden", "replaced"),
    "05_weighted_sum_and_self_attention": ("memorised", "switched_off"),
    "05b_multi_head_attention": ("forbidden", "switched_off"),
    "06_kv_cache_gqa": ("mistake", "replaced"),
    "07_positions_and_rope": ("forbidden", "switched_off"),
    "08_the_decoder_block": ("mistake", "replaced"),
    "09_tiled_attention": ("memorised", "switched_off"),
    "10_attention_that_learns": ("blank", None),
    "11_modern_kv_cache": ("blank", "replaced"),
}
ATTEMPTS = {"switched_off": SWITCHED_OFF, "replaced": REPLACED, None: ""}
WRONG = {"mistake": MISTAKES, "memorised": MISTAKES, "forbidden": FORBIDDEN}


GRADEBOOK = """
import json, sys  # run by the grading environment's python: {assignment: {student: [score, max, grades]}}
from nbgrader.api import Gradebook
scores = {}
for course in sys.argv[1:]:  # the course folders, one gradebook each
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gb:
        for assignment in gb.assignments:
            for sub in gb.assignment_submissions(assignment.name):
                grades = {g.name: g.score for nb in sub.notebooks for g in nb.grades}
                scores.setdefault(assignment.name, {})[sub.student.id] = [sub.score, sub.max_score, grades]
json.dump(scores, sys.stdout)
"""


def autograde_in_parallel(env, courses):
    """`nbgrader autograde` in each course folder at once: each notebook runs in a fresh
    kernel, and two folders keep both cores busy."""
    logs = [Path(course) / "autograde.log" for course in courses]  # a file, not a pipe: a full pipe
    runs = []                                                        # would stall the other run
    for course, log in zip(courses, logs):
        with open(log, "w") as out:
            runs.append(subprocess.Popen([str(BIN / "nbgrader"), "autograde", "*"], cwd=course, env=env,
                                         stdout=subprocess.DEVNULL, stderr=out))
    for run, log in zip(runs, logs):
        run.wait()
        assert run.returncode == 0, f"nbgrader autograde failed:\n{log.read_text()[-3000:]}"


def read_gradebooks(env, courses) -> dict:
    """{assignment: {student: [score, max, grades]}} from the courses' gradebooks (one process:
    importing nbgrader takes seconds)."""
    result = subprocess.run([str(BIN / "python"), "-c", GRADEBOOK, *map(str, courses)], env=env,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def check_points(stem) -> dict:
    """{checker: points} of the autograded checks of one notebook (teachers/points.toml)."""
    return {k: v for k, v in POINTS[stem].items() if k != "written"}


def one(names):
    (name,) = names  # the stub of a memorised exercise defines one function
    return name


def submissions(course, assignment) -> dict:
    """{student: {grade_id: source}} for one assignment."""
    source = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    released = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    reference = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
                 if c.metadata["nbgrader"]["solution"] and c.cell_type == "code"}
    stubs = {c.metadata["nbgrader"]["grade_id"]: c.source for c in released.cells
             if c.metadata["nbgrader"]["solution"] and c.cell_type == "code"}
    first = next(iter(stubs))
    wrong, attempt = TRICKS[assignment]
    if wrong == "blank":
        answers = {first: ATTEMPTS[attempt] + stubs[first]}
    else:
        checker = WRONG[wrong][assignment][0]
        answer = {"mistake": lambda: MISTAKES[assignment][1],
                  "forbidden": lambda: FORBIDDEN[assignment][1],
                  "memorised": lambda: MEMORISED.format(
                      reference=reference[f"answer-{checker}"], checker=checker,
                      name=one(COURSE_MAKER.stub_split(stubs[f"answer-{checker}"])[2]))}[wrong]()
        answers = {**reference, f"answer-{checker}": answer}
        answers[first] = ATTEMPTS[attempt] + answers[first]
    ways = [NBGRADER_WAY[assignment]] if assignment in FORBIDDING else []
    return {"reference": reference, wrong: answers, **forbidden_hand_ins(assignment, reference, ways=ways)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    env = grading_env()
    base = tmp_path_factory.mktemp("nbgrader")
    course = base / "course"
    counts = COURSE_MAKER.write_course(course, EXERCISE_NOTEBOOKS)
    # Here only (not in the course a teacher gets): the kernels make the figures but do not turn
    # them into PNGs (0.3-0.5 s of the 1.5-2 s of CPU a notebook's cells take). The scores and
    # the feedback's text do not depend on them, and nbval draws every figure of every notebook.
    with open(course / "nbgrader_config.py", "a") as config:
        config.write('c.Execute.extra_arguments = ["--InlineBackend.figure_formats=set()"]\n')
    nbgrader(env, course, "generate_assignment", "*")
    # the same released course twice, each with its own gradebook and half the submissions
    twin = base / "twin"
    shutil.copytree(course, twin)
    # The two autograde at once, so their kernels talk over Unix sockets in their own folder, not
    # TCP ports: a port one kernel was handed could be taken by another before it bound it
    # ("Address already in use", seen once here). The path is absolute: a kernel runs elsewhere.
    # Not on Windows (no Unix sockets there for Jupyter) nor where the path is too long for one.
    for folder in (course, twin) if os.name != "nt" and len(str(base)) < 80 else ():
        with open(folder / "nbgrader_config.py", "a") as config:
            config.write(f'c.KernelManager.transport = "ipc"\n'
                         f'c.KernelManager.ip = {str(folder / "kernel")!r}\n')
    k = 0
    for assignment in counts:
        for student, answers in submissions(course, assignment).items():
            hand_in((course, twin)[k % 2], assignment, student, answers)
            k += 1
    autograde_in_parallel(env, [course, twin])
    for folder in (course, twin):
        if (folder / "autograded" / "mistake").exists():
            nbgrader(env, folder, "generate_feedback", "*", "--student=mistake")
    scores = read_gradebooks(env, [course, twin])
    feedback = {path.parent.name: path for path in base.glob("*/feedback/mistake/*/*.html")}
    return SimpleNamespace(course=course, counts=counts, scores=scores, feedback=feedback)


IDS = [p.stem[:3].rstrip("_") for p in EXERCISE_NOTEBOOKS]


def test_every_notebook_with_exercises_is_an_assignment(graded):
    counts, scores = graded.counts, graded.scores
    assert set(counts) == {p.stem for p in EXERCISE_NOTEBOOKS} == set(scores)
    assert all(count >= 1 for count in counts.values())
    assert {"05b_multi_head_attention"} <= set(counts)


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=IDS)
def test_reference_solutions_get_every_autograded_point(graded, path):
    score, max_score, grades = graded.scores[path.stem]["reference"]
    assert max_score == sum(POINTS[path.stem].values())  # the checks and the written answer
    assert {k: v for k, v in grades.items() if k != "written"} == check_points(path.stem)
    assert len(check_points(path.stem)) == graded.counts[path.stem]
    assert score == sum(check_points(path.stem).values()), grades


def test_every_assignment_has_a_second_hand_in_and_each_trick_is_tried_on_several():
    assert set(TRICKS) == {p.stem for p in EXERCISE_NOTEBOOKS}
    wrong = [w for w, _ in TRICKS.values()]
    attempts = [a for _, a in TRICKS.values()]
    assert set(wrong) == {"mistake", "memorised", "forbidden", "blank"}
    assert min(map(wrong.count, ("mistake", "memorised"))) >= 3 and min(map(attempts.count, ATTEMPTS)) >= 1
    assert min(map(attempts.count, ("switched_off", "replaced"))) >= 4
    assert ("memorised", "replaced") not in TRICKS.values()  # see TRICKS
    for assignment, (kind, _) in TRICKS.items():
        assert kind == "blank" or assignment in WRONG[kind], (assignment, kind)


BLANK = [p for p in EXERCISE_NOTEBOOKS if TRICKS[p.stem][0] == "blank"]
WRONG_ANSWER = [(kind, a) for a, (kind, _) in TRICKS.items() if kind != "blank"]


@pytest.mark.parametrize("path", BLANK, ids=[p.stem[:3].rstrip("_") for p in BLANK])
def test_a_blank_notebook_gets_zero_whatever_its_first_cell_tries(graded, path):
    score, max_score, grades = graded.scores[path.stem]["blank"]
    assert max_score == sum(POINTS[path.stem].values()) > 0
    assert score == 0, grades


@pytest.mark.parametrize("kind, assignment", WRONG_ANSWER, ids=[a[:3].rstrip("_") for _, a in WRONG_ANSWER])
def test_a_wrong_answer_loses_that_exercise_whatever_the_first_cell_tries_and_only_that(
        graded, kind, assignment):
    if assignment not in graded.counts:
        pytest.fail(f"TRICKS names {assignment}, which is not among the notebooks")
    checker = WRONG[kind][assignment][0]
    score, _, grades = graded.scores[assignment][kind]
    assert grades[checker] == 0, (TRICKS[assignment], grades)
    others = {k: v for k, v in grades.items() if k not in (checker, "written")}
    assert others == {k: v for k, v in check_points(assignment).items() if k != checker}
    assert score == sum(check_points(assignment).values()) - check_points(assignment)[checker]
    if kind == "mistake":  # the feedback names the mistake, and only it
        hint = MISTAKES[assignment][2]
        text = html.unescape(re.sub(r"<[^>]+>", "", graded.feedback[assignment].read_text()))
        failures = [line for line in text.splitlines() if line.startswith("AssertionError: ❌ Not yet: ")]
        assert len(failures) == 1 and hint in failures[0], failures
        assert "BEGIN HIDDEN TESTS" not in text and "reference=" not in text  # no solution in feedback


WITH_A_HELPER = [(a, e.checker, helper, way) for a, exercises in FORBIDDING.items() for e in exercises
                 for helper in e.helpers for way in WAYS]


@pytest.mark.parametrize("assignment, checker, helper, way", WITH_A_HELPER,
                         ids=[f"{a[:3].rstrip('_')}-{h}-{w}" for a, _, h, w in WITH_A_HELPER])
def test_each_answer_with_a_forbidden_helper_is_right_and_the_grader_stops_it(assignment, checker, helper,
                                                                               way):
    # Here, without nbgrader: the answer passes the course's own check (so it would score, were
    # the helper allowed), and the verdict of its hidden test refuses it.
    (exercise,) = [e for e in FORBIDDING[assignment] if e.checker == checker]
    source = with_helper(exercise, helper, way)
    namespace = {"ah": ah, "np": np}
    exec(source, namespace)  # noqa: S102 (the test's own answer)
    assert eval(exercise.call, namespace).ok, f"{assignment}, {way}: wrong even with the helper:\n{source}"
    with pytest.raises(AssertionError, match="Not yet"):
        AUTOGRADER.verdict(namespace, ROOT, exercise.call, [exercise.stub.name], forbidden=exercise.helpers)


def test_every_way_and_every_forbidding_exercise_goes_through_real_nbgrader():
    assert len({(a, e.checker) for a, exercises in FORBIDDING.items() for e in exercises}) >= 9
    assert set(WITH_THE_HELPER) <= {e.checker for exercises in FORBIDDING.values() for e in exercises}
    assert set(NBGRADER_WAY) == set(FORBIDDING) and set(NBGRADER_WAY.values()) == set(IN_NBGRADER)
    for assignment, exercises in FORBIDDING.items():  # each exercise, each of its helpers, in that hand-in
        hand_ins = forbidden_hand_ins(assignment, {}, ways=[NBGRADER_WAY[assignment]])
        for e in exercises:
            assert {answers[f"answer-{e.checker}"] for answers in hand_ins.values()} == {
                with_helper(e, helper, NBGRADER_WAY[assignment]) for helper in e.helpers}
    assert set(IN_NBGRADER) <= set(WAYS)  # and in this process every exercise every way: WITH_A_HELPER


@pytest.mark.parametrize("way", IN_NBGRADER)
def test_a_forbidden_helper_scores_zero_however_the_answer_reaches_it(graded, way):
    wrong, seen = {}, 0
    for assignment, exercises in FORBIDDING.items():
        for student in [s for s in graded.scores[assignment] if s.split("-")[0] == way]:
            seen += 1
            _, _, grades = graded.scores[assignment][student]
            forbidding = {e.checker for e in exercises}
            if any(grades[checker] != 0 for checker in forbidding):
                wrong[assignment] = {checker: grades[checker] for checker in forbidding}
            others = {k: v for k, v in grades.items() if k not in forbidding | {"written"}}
            assert others == {k: v for k, v in check_points(assignment).items() if k not in forbidding}, (
                f"{assignment}, {way}: an exercise that forbids nothing lost points", grades)
    assert seen, f"no hand-in reached the forbidden helper {way!r} through nbgrader"
    assert not wrong, f"answers that reach the forbidden helper {way!r} scored: {wrong}"


def test_the_released_notebooks_keep_the_course_stubs_and_show_no_switch(graded):
    # the released notebook shows each answer cell as the course does: stub, no solution
    course, counts = graded.course, graded.counts
    for assignment in counts:
        released = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
        original = nbformat.read(ROOT / "notebooks" / f"{assignment}.ipynb", as_version=4)
        stubs = {COURSE_MAKER.stub_split(c.source)[1].strip() for c in original.cells
                 if c.cell_type == "code" and COURSE_MAKER.stub_split(c.source)}
        answers = [c for c in released.cells if c.metadata["nbgrader"]["solution"] and c.cell_type == "code"]
        assert len(answers) == counts[assignment]
        for cell in answers:
            assert "SOLUTION" not in cell.source
            assert cell.source.strip() in stubs
        locked = "\n".join(c.source for c in released.cells if c.metadata["nbgrader"]["locked"])
        assert "grading(False)" not in locked and "HIDDEN TESTS" not in locked
        written = [c for c in released.cells if c.metadata["nbgrader"]["grade_id"] == "written"]
        assert len(written) == ("written" in POINTS[assignment]), assignment
        assert all(c.cell_type == "markdown" and c.metadata["nbgrader"]["points"] ==
                   POINTS[assignment]["written"] for c in written)


def test_writing_the_course_leaves_the_notebooks_alone(tmp_path):
    before = {p: p.read_bytes() for p in EXERCISE_NOTEBOOKS}
    COURSE_MAKER.write_course(tmp_path / "again", EXERCISE_NOTEBOOKS)
    assert before == {p: p.read_bytes() for p in EXERCISE_NOTEBOOKS}

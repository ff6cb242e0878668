"""The generated nbgrader course round-trips through real nbgrader (marker `grading`).

nbgrader is installed into its own environment, .cache/grading-venv (git-ignored;
the environment variable ATTENTION_GRADING_VENV names another folder),
from the project's `grading` extra with the lock (constraints.txt); it is rebuilt
only when pyproject.toml or the lock changes. For every notebook with exercises, three students hand in:
- "reference": the released notebook with the reference solutions: full marks;
- "blank": the released notebook untouched: zero;
- "mistake": the reference solutions with one typical wrong answer (for the
  notebooks in MISTAKES): that exercise loses its point, the others keep theirs,
  and the feedback shows the hint.
The scores are read from nbgrader's own gradebook.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from conftest import COURSE_MAKER, EXERCISE_NOTEBOOKS

from tools.notebooks import ROOT

pytestmark = pytest.mark.grading

# ATTENTION_GRADING_VENV may point elsewhere, e.g. to keep one environment across fresh clones in CI.
VENV = Path(os.environ.get("ATTENTION_GRADING_VENV") or ROOT / ".cache" / "grading-venv")
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")

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
    "06_kv_cache_gqa": ("check_kv_head", "def my_kv_head(i, h_q, h_kv):\n    return i % h_kv",
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


def grading_env() -> dict:
    """The environment for nbgrader: its venv, built once per version of pyproject.toml."""
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + (ROOT / "constraints.txt").read_bytes()
                         + sys.version.encode() + str(ROOT).encode()).hexdigest()  # editable from ROOT
    stamp = VENV / "requirements.sha256"
    if not (stamp.exists() and stamp.read_text() == key):
        shutil.rmtree(VENV, ignore_errors=True)
        venv.create(VENV, with_pip=True)
        subprocess.run([str(BIN / "python"), "-m", "pip", "install", "-q",
                        "-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[grading]"], check=True)
        stamp.write_text(key)
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"  # nbgrader runs `alembic` by name
    env.pop("ATTENTION_GRADING", None)  # the course turns grading on itself
    env.pop("PYTHONPATH", None)
    return env


def nbgrader(env, course, *args):
    result = subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stderr[-3000:]}"
    return result


def hand_in(course, assignment, student, answers):
    """Copy the released assignment into submitted/, with `answers` {grade_id: source}."""
    folder = course / "submitted" / student / assignment
    shutil.copytree(course / "release" / assignment, folder)
    path = folder / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(nb, path)


GRADEBOOK = """
import json, sys  # run by the grading environment's python: {assignment: {student: [score, max, grades]}}
from nbgrader.api import Gradebook
scores = {}
with Gradebook("sqlite:///gradebook.db") as gb:
    for assignment in gb.assignments:
        for sub in gb.assignment_submissions(assignment.name):
            grades = {g.name: g.score for nb in sub.notebooks for g in nb.grades}
            scores.setdefault(assignment.name, {})[sub.student.id] = [sub.score, sub.max_score, grades]
json.dump(scores, sys.stdout)
"""


def autograde_in_parallel(env, courses):
    """`nbgrader autograde` in each course folder at once: each notebook runs in a fresh
    kernel, and two folders keep both cores busy."""
    runs = [subprocess.Popen([str(BIN / "nbgrader"), "autograde", "*"], cwd=course, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for course in courses]
    for run in runs:
        _, err = run.communicate()
        assert run.returncode == 0, f"nbgrader autograde failed:\n{err[-3000:]}"


def read_gradebook(env, course) -> dict:
    result = subprocess.run([str(BIN / "python"), "-c", GRADEBOOK], cwd=course, env=env,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    env = grading_env()
    base = tmp_path_factory.mktemp("nbgrader")
    course = base / "course"
    counts = COURSE_MAKER.write_course(course, EXERCISE_NOTEBOOKS)
    nbgrader(env, course, "generate_assignment", "*")
    # the same released course twice, each with its own gradebook and half the submissions
    twin = base / "twin"
    shutil.copytree(course, twin)
    for k, assignment in enumerate(counts):
        source = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        reference = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
                     if c.metadata["nbgrader"]["solution"]}
        hand_in(course, assignment, "reference", reference)
        hand_in(twin, assignment, "blank", {})
        if assignment in MISTAKES:
            checker, wrong, _ = MISTAKES[assignment]
            hand_in((course, twin)[k % 2], assignment, "mistake",
                    {**reference, f"answer-{checker}": wrong})
    autograde_in_parallel(env, [course, twin])
    scores = {}
    for folder in (course, twin):
        if (folder / "autograded" / "mistake").exists():
            nbgrader(env, folder, "generate_feedback", "*", "--student=mistake")
        for assignment, students in read_gradebook(env, folder).items():
            scores.setdefault(assignment, {}).update(students)
    feedback = {path.parent.name: path for path in base.glob("*/feedback/mistake/*/*.html")}
    return SimpleNamespace(course=course, counts=counts, scores=scores, feedback=feedback)


def test_every_notebook_with_exercises_is_an_assignment(graded):
    counts, scores = graded.counts, graded.scores
    assert set(counts) == {p.stem for p in EXERCISE_NOTEBOOKS} == set(scores)
    assert all(count >= 1 for count in counts.values())


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=[p.stem[:2] for p in EXERCISE_NOTEBOOKS])
def test_reference_solutions_get_full_marks(graded, path):
    counts, scores = graded.counts, graded.scores
    score, max_score, grades = scores[path.stem]["reference"]
    assert max_score == counts[path.stem] * COURSE_MAKER.POINTS
    assert score == max_score, grades


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=[p.stem[:2] for p in EXERCISE_NOTEBOOKS])
def test_the_blank_notebook_gets_zero(graded, path):
    counts, scores = graded.counts, graded.scores
    score, max_score, grades = scores[path.stem]["blank"]
    assert max_score == counts[path.stem] * COURSE_MAKER.POINTS > 0
    assert score == 0, grades


@pytest.mark.parametrize("assignment", sorted(MISTAKES))
def test_a_typical_mistake_loses_that_exercise_and_the_feedback_names_it(graded, assignment):
    counts, scores, feedback = graded.counts, graded.scores, graded.feedback
    if assignment not in counts:
        pytest.fail(f"MISTAKES names {assignment}, which is not among the notebooks")
    checker, _, hint = MISTAKES[assignment]
    score, max_score, grades = scores[assignment]["mistake"]
    assert grades[checker] == 0
    assert {k: v for k, v in grades.items() if k != checker} == {
        k: COURSE_MAKER.POINTS for k in grades if k != checker}
    assert score == max_score - COURSE_MAKER.POINTS
    page = feedback[assignment].read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    failures = [line for line in text.splitlines() if line.startswith("AssertionError: ❌ Not yet: ")]
    assert len(failures) == 1 and hint in failures[0], failures


def test_the_source_notebooks_keep_the_course_stubs(graded):
    # the released notebook shows each answer cell as the course does: stub, no solution
    course, counts = graded.course, graded.counts
    for assignment in counts:
        released = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
        original = nbformat.read(ROOT / "notebooks" / f"{assignment}.ipynb", as_version=4)
        stubs = {COURSE_MAKER.stub_split(c.source)[1].strip() for c in original.cells
                 if c.cell_type == "code" and COURSE_MAKER.stub_split(c.source)}
        answers = [c for c in released.cells if c.metadata["nbgrader"]["solution"]]
        assert len(answers) == counts[assignment]
        for cell in answers:
            assert "SOLUTION" not in cell.source
            assert cell.source.strip() in stubs


def test_writing_the_course_leaves_the_notebooks_alone(tmp_path):
    before = {p: p.read_bytes() for p in EXERCISE_NOTEBOOKS}
    COURSE_MAKER.write_course(tmp_path / "again", EXERCISE_NOTEBOOKS)
    assert before == {p: p.read_bytes() for p in EXERCISE_NOTEBOOKS}

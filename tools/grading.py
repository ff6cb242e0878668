"""The environment nbgrader runs in for the grading tests and the autograde benchmark.

nbgrader is installed into its own environment, .cache/grading-venv (git-ignored; the
environment variable ATTENTION_GRADING_VENV names another folder), from the project's
`grading` extra and the helper (editable), at the lock's versions (constraints.txt), by uv
in a few seconds. So the test environment, whose JupyterLab the browser tests drive, stays
without nbgrader's extensions. It is rebuilt only when pyproject.toml or the lock changes;
a lock file keeps two test workers from building it at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import nbformat

from tools.notebooks import ROOT
from tools.project import PROJECT, UV_OPTIONS, uv_install

GRADING_EXTRA = PROJECT["optional-dependencies"]["grading"]  # nbgrader's range, from pyproject.toml
VENV = Path(os.environ.get("ATTENTION_GRADING_VENV") or ROOT / ".cache" / "grading-venv")
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def grading_env() -> dict:
    """The environment variables for nbgrader: its own venv first on PATH (nbgrader runs
    `alembic` by name), built once per version of pyproject.toml and the lock."""
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + (ROOT / "constraints.txt").read_bytes()
                         + sys.version.encode() + str(ROOT).encode() + str(UV_OPTIONS).encode()).hexdigest()
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / f"{VENV.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = VENV / "requirements.sha256"
        if not (stamp.exists() and stamp.read_text() == key):
            shutil.rmtree(VENV, ignore_errors=True)
            venv.create(VENV, with_pip=False)
            uv_install(BIN / "python", "-c", str(ROOT / "constraints.txt"), "-e", str(ROOT), *GRADING_EXTRA)
            stamp.write_text(key)
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    env.pop("ATTENTION_GRADING", None)  # the course turns grading on itself
    env.pop("PYTHONPATH", None)
    return env


def nbgrader(env: dict, folder, *args: str) -> subprocess.CompletedProcess:
    """`nbgrader ARGS` in `folder`; a failure raises with the end of nbgrader's log."""
    result = subprocess.run([str(BIN / "nbgrader"), *args], cwd=folder, env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return result


def fill_answers(notebook: Path, answers: dict) -> None:
    """Put `answers` {grade_id: source} into the notebook's answer cells, as a student types them."""
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    nbformat.write(nb, notebook)


def hand_in(course: Path, assignment: str, student: str, answers: dict) -> None:
    """Copy the released assignment into submitted/, with `answers` {grade_id: source}."""
    folder = course / "submitted" / student / assignment
    shutil.copytree(course / "release" / assignment, folder)
    fill_answers(folder / f"{assignment}.ipynb", answers)


def reference_answers(course: Path, assignment: str) -> dict:
    """{grade_id: the reference solution} of the course's source notebook, as a student would
    type it in place of the stub (the text between its solution markers)."""
    source = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]:
            re.search(r"^### BEGIN SOLUTION\n(.*)\n### END SOLUTION$", c.source, re.S | re.M).group(1)
            for c in source.cells if c.metadata["nbgrader"]["solution"] and c.cell_type == "code"}

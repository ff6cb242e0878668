"""What the project declares about itself: pyproject.toml's ranges and the lock's pins,
read in one place for the tests, and `uv_install`, which builds the environments the tests
make beside the test environment from them. (The repository's address and release tag are
read by scripts/set_repository.py, which also rewrites the links that name them.)"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "constraints.txt"
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]  # requires-python >= 3.10; the lock covers each
PROJECT = tomllib.loads(PYPROJECT.read_text())["project"]
RUNTIME = [Requirement(r) for r in PROJECT["dependencies"]]
TEST = [Requirement(r) for r in PROJECT["optional-dependencies"]["test"]]


def lock_lines() -> list[Requirement]:
    """The lock as Requirements, one per line, comments and blanks skipped."""
    return [Requirement(line.split("#")[0]) for line in LOCK.read_text().splitlines()
            if line.split("#")[0].strip() and not line.lstrip().startswith("-")]


def locked(python: str) -> dict[str, str]:
    """{name: version} that the lock installs on this Python version ("3.10", ...)."""
    # the running Python's own full version where it is that one: the lock may split at a patch release
    full = platform.python_version() if platform.python_version().startswith(python + ".") else python + ".0"
    env = {"python_version": python, "python_full_version": full}
    pins = {}
    for req in lock_lines():
        if req.marker is None or req.marker.evaluate(env):
            name = canonicalize_name(req.name)
            if name in pins:
                raise ValueError(f"the lock pins {name} twice for Python {python}")
            pins[name] = str(req.specifier).removeprefix("==")
    return pins


# How uv installs; the environments built with it are keyed on these too (rebuilt when they change).
UV_OPTIONS = ("--quiet", "--compile-bytecode")


def uv_install(python, *args: str) -> None:
    """`uv pip install` into the environment of interpreter `python` (a venv made without pip):
    how the tests build the environments they need beside the test environment (compat, grading).
    uv installs in parallel from its cache, seconds where pip takes a minute. Unlike pip, uv
    writes no bytecode unless asked: without it, where PYTHONDONTWRITEBYTECODE is set (as in
    many containers), every kernel would compile matplotlib and the rest afresh (about 2 s
    of CPU per notebook run)."""
    from uv import find_uv_bin  # here, so that reading the lock needs no uv

    result = subprocess.run([find_uv_bin(), "pip", "install", *UV_OPTIONS, "--python", str(python), *args],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"uv pip install {' '.join(args)} into {python} failed:\n{result.stderr[-3000:]}")


def newest_runs(markexpr: str | None) -> bool:
    """Whether this pytest run tests the newest releases (tests/test_newest.py). They change from
    day to day: CI tests them (CI=true), and so does a run that asks (ATTENTION_NEWEST=1, or
    `-m newest`, the `markexpr`); elsewhere a run's result does not depend on the day."""
    return (os.environ.get("CI", "").lower() == "true" or os.environ.get("ATTENTION_NEWEST") == "1"
            or (markexpr or "").strip() == "newest")

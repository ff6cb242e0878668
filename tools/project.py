"""What the project declares about itself: pyproject.toml's ranges, the lock's pins and
the repository's address, read in one place for the tests, benchmarks and scripts."""

from __future__ import annotations

import re
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
    env = {"python_version": python, "python_full_version": python + ".0"}
    pins = {}
    for req in lock_lines():
        if req.marker is None or req.marker.evaluate(env):
            name = canonicalize_name(req.name)
            if name in pins:
                raise ValueError(f"the lock pins {name} twice for Python {python}")
            pins[name] = str(req.specifier).removeprefix("==")
    return pins


def repository_url(pyproject: Path = PYPROJECT) -> str:
    """The course's public address: `Repository` under [project.urls], without a trailing /."""
    urls = tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {})
    if "Repository" not in urls:
        raise ValueError(f"{pyproject.name} has no Repository under [project.urls]")
    return urls["Repository"].rstrip("/")


GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")


def repository(pyproject: Path = PYPROJECT) -> str:
    """OWNER/NAME of the course's GitHub repository."""
    url = repository_url(pyproject)
    match = GITHUB.fullmatch(url)
    if not match:
        raise ValueError(f"Repository must be https://github.com/OWNER/NAME, got {url!r}")
    return f"{match[1]}/{match[2]}"

"""The three places that name packages agree, and Binder's build recipe is right.

pyproject.toml is what pip installs (the README's commands), environment.yml
is the local conda route, binder/environment.yml is what mybinder.org builds.
A pin that drifts in one of them changes the stored notebook outputs for
that route only, which nbval would then report as a confusing failure.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^\s*-\s+([A-Za-z0-9_.\-]+)==([^\s#]+)\s*(?:#.*)?$")


def pins_from_pyproject(*, extras=()):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    pins = {}
    for req in requirements:
        spec, _, marker = req.partition(";")
        if "python_version < '3.11'" in marker:
            continue  # Binder and conda use Python 3.11
        name, _, version = spec.strip().partition("==")
        if version:
            pins[name.lower()] = version
    return pins


def pins_from_yml(path):
    return {m[1].lower(): m[2] for line in path.read_text().splitlines() if (m := PIN.match(line))}


def test_every_requirement_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    loose = [r for r in project["dependencies"] + project["optional-dependencies"]["test"]
             if "==" not in r and "python_version < '3.11'" not in r]
    assert loose == [], f"unpinned requirements change stored outputs on the next release: {loose}"


def test_binder_names_the_runtime_packages_and_nbval_with_the_same_pins():
    expected = pins_from_pyproject()
    expected["nbval"] = pins_from_pyproject(extras=["test"])["nbval"]
    assert pins_from_yml(ROOT / "binder" / "environment.yml") == expected


def test_conda_environment_names_runtime_and_test_packages_with_the_same_pins():
    assert pins_from_yml(ROOT / "environment.yml") == pins_from_pyproject(extras=["test"])


@pytest.mark.parametrize("path", ["environment.yml", "binder/environment.yml"])
def test_conda_files_pin_python_311_and_install_the_helper_package(path):
    text = (ROOT / path).read_text()
    assert re.search(r"^\s*-\s+python=3\.11\s*$", text, re.M), "repo2docker reads python=3.11"
    # pip runs in the folder holding the yml: binder/ needs "..", the root "."
    local = ".." if path.startswith("binder") else "."
    assert re.search(rf"^\s*-\s+-e {re.escape(local)}\s*$", text, re.M)


def test_binder_switches_off_the_jupyterlab_news_popup():
    import json

    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text())
    notification = overrides["@jupyterlab/apputils-extension:notification"]
    assert notification == {"checkForUpdates": False, "fetchNews": "false"}
    assert "overrides.json" in (ROOT / "binder" / "postBuild").read_text()


def test_repo2docker_dockerfile_installs_environment_and_helper_package(tmp_path):
    r2d = shutil.which("jupyter-repo2docker", path=str(Path(sys.executable).parent)) \
        or shutil.which("jupyter-repo2docker")
    assert r2d, "jupyter-repo2docker is a test requirement: pip install -e '.[test]'"
    # A copy of the files git would ship, so local clutter cannot hide a problem.
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp_path / name)
    result = subprocess.run([r2d, "--no-build", "--debug", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    dockerfile = result.stdout + result.stderr
    assert "Building conda environment for python=3.11" in dockerfile
    # The whole repository is copied before the environment is installed (the
    # local "-e .." needs it), and then the binder environment file is used.
    copy = dockerfile.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    install = dockerfile.index('env update -p ${NB_PYTHON_PREFIX} --file "binder/environment.yml"')
    assert copy < install
    assert "./binder/postBuild" in dockerfile

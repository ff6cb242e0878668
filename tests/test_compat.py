"""The course where classes run it: the lowest supported versions, from the student copy.

One separate venv holds the lowest version of every range in pyproject.toml
(numpy, matplotlib, ipywidgets, anywidget) and the kernel's own packages at
their locked versions, and NOT the helper package: every notebook must find
it through its setup cell, as in a clone on a hub or a laptop that never ran
`pip install`. The notebooks run from the student copy a teacher hands out
(scripts/make_student_copy.py), so the same run shows the copy is complete.
Each notebook runs top to bottom (cells tagged
raises-exception may raise, no other) and then every slider of every panel
goes to both ends (finite values at each, and the picture sent what the panel computes);
outputs are not compared (the locked environment's nbval does that).

The venv is built once, in .cache/compat-venv/ (git-ignored), keyed on its
requirements and the Python version, and reused until they change.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import psutil
import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

from scripts.make_student_copy import write_copy
from tools.project import RUNTIME, UV_OPTIONS, locked, uv_install
from tools.sweep import SWEEP

pytestmark = pytest.mark.compat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))  # 07-09 and any later one included
# ATTENTION_COMPAT_VENV may point elsewhere, e.g. to keep the venvs across fresh clones in CI.
CACHE = Path(os.environ.get("ATTENTION_COMPAT_VENV") or ROOT / ".cache" / "compat-venv")
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
KERNEL_SIDE = ["ipykernel", "nbclient", "nbformat"]  # to run notebooks; versions from the lock
# The front end of a class still on ipywidgets 7: JupyterLab 3.6 with ipywidgets 7's own
# JupyterLab extension (jupyterlab_widgets 1.x; 3.x is ipywidgets 8's), for the browser test below.
FRONT_END = ["jupyterlab==3.6.8", "jupyterlab_widgets==1.1.11"]


def lowest():
    """{name: version}: the lower end of every range the helper declares."""
    floors = {}
    for req in RUNTIME:
        lower = [s.version for s in req.specifier if s.operator == ">="]
        assert lower, f"{req} has no lower end to test"
        floors[canonicalize_name(req.name)] = lower[0]
    return floors


def requirements():
    pins = locked(PYTHON)
    return [f"{n}=={v}" for n, v in lowest().items()] + [f"{n}=={pins[n]}" for n in KERNEL_SIDE] + FRONT_END


@pytest.fixture(scope="session")
def compat_python():
    if sys.version_info >= (3, 13) and not os.environ.get("CI"):
        # numpy 1.26 and matplotlib 3.8 have no wheels there; CI (Python 3.11) always runs these
        pytest.skip("the lowest supported versions have no wheels for Python 3.13+: "
                    "run the compat tests with Python 3.10-3.12")
    reqs = requirements()
    key = hashlib.sha256(json.dumps([sys.version, sys.platform, reqs, UV_OPTIONS]).encode()).hexdigest()[:12]
    home = CACHE / key
    python = home / "bin" / "python"
    if not (home / "ready").exists():
        for old in CACHE.glob("*"):  # one venv at a time: a stale one only takes disk
            if old.name != key and not (old.name.startswith("building-")  # (another worker's, or
                                        and psutil.pid_exists(int(old.name.split("-")[1]))):  # a dead one)
                shutil.rmtree(old, ignore_errors=True)
        building = CACHE / f"building-{os.getpid()}"
        venv.create(building, with_pip=False)  # uv installs into it; pip, where a test needs it, runs
        try:                                   # from the test environment (--python)
            uv_install(building / "bin" / "python", "--only-binary", ":all:", *reqs)
        except RuntimeError as err:
            pytest.fail(f"could not install the lowest supported versions {reqs} for Python {PYTHON} "
                        f"(they may have no wheels for it; the compat venv is tested on 3.10-3.12): {err}")
        (building / "ready").write_text("\n".join(reqs) + "\n")
        # Built aside and renamed, so a half-built venv is never used. Only bin/python is run,
        # which does not depend on the folder's name.
        try:
            building.rename(home)
        except OSError:  # the other worker built the same venv first
            shutil.rmtree(building, ignore_errors=True)
    return python


# Runs in the compat venv: the notebook, then every slider to both ends, then where the helper came from.
RUNNER = r'''
import importlib.util, json, sys
import nbformat
from nbclient import NotebookClient

path, sweep = sys.argv[1], sys.stdin.read()
assert importlib.util.find_spec("attention_helpers") is None, "the helper must not be installed here"
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=300, kernel_name="python3",
                        resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}})
with client.setup_kernel():
    for index, cell in enumerate(nb.cells):  # raises unless an erroring cell is tagged raises-exception
        if cell.cell_type == "code":
            client.execute_cell(cell, index)
    extra = nbformat.v4.new_code_cell(sweep + "\nprint(_json.dumps(_ah.__file__))")
    nb.cells.append(extra)
    client.execute_cell(extra, len(nb.cells) - 1)
lines = "".join(o.get("text", "") for o in extra.outputs if o.output_type == "stream").splitlines()
print(json.dumps({"sweep": json.loads(lines[0]), "helper": json.loads(lines[1])}))
'''


def test_compat_venv_has_the_lowest_versions_and_not_the_helper(compat_python):
    code = ("import json, importlib.metadata as m, importlib.util as u;"
            f"print(json.dumps([{{n: m.version(n) for n in {sorted(lowest())!r}}},"
            " u.find_spec('attention_helpers') is None]))")
    versions, absent = json.loads(subprocess.run([compat_python, "-I", "-c", code], cwd=ROOT / "notebooks",
                                                 capture_output=True, text=True, check=True).stdout)
    assert {canonicalize_name(n): Version(v) for n, v in versions.items()} == \
        {n: Version(v) for n, v in lowest().items()}
    assert absent, "the helper is importable without the setup cell: the bootstrap would go untested"


@pytest.fixture(scope="module")
def student_copy(tmp_path_factory):
    """The repository as a teacher hands it out (scripts/make_student_copy.py): the compat run
    executes the notebooks from it, so one run checks both that they run at the lowest versions
    with the helper not installed, and that the copy has everything they need."""
    out = tmp_path_factory.mktemp("student") / "attention-math"
    write_copy(out)
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_from_the_student_copy_at_the_lowest_versions(compat_python, student_copy, path,
                                                                      tmp_path):
    # -I: no PYTHONPATH, no user site, and not the current folder on sys.path, so nothing
    # but the setup cell can make the helper importable
    notebook = student_copy / "notebooks" / path.name
    result = subprocess.run([compat_python, "-I", "-c", RUNNER, str(notebook)], input=SWEEP,
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.splitlines()[-1])
    # The setup cell found the helper in the copy, next to its notebooks/.
    assert Path(report["helper"]) == student_copy / "attention_helpers" / "__init__.py"
    for name, key, _attr, end, finite, drawn, *_ in report["sweep"]:
        assert finite, f"{name}: {key} at {end} gives a value that is not finite"
        assert drawn, f"{name}: {key} at {end}: the picture was not sent what the panel computes"


def test_installing_the_helper_keeps_every_version_already_in_range(compat_python, tmp_path):
    """What a hub admin sees: `pip install` of the helper into an environment that already has
    (here the lowest) supported versions installs the helper and nothing else."""
    report = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "--python", compat_python]  # the compat venv has no pip of its own
    result = subprocess.run([*pip, "install", "--dry-run", "--quiet", "--report", report, str(ROOT)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    installs = {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
                for i in json.loads(report.read_text())["install"]}
    assert set(installs) == {"attention-helpers"}, f"pip would also install or replace {installs}"


@pytest.mark.browser
def test_the_panels_draw_their_pictures_in_jupyterlab_3_6_with_ipywidgets_7(compat_python, student_copy,
                                                                            browser):
    """A class on the lowest supported versions, ipywidgets 7 among them, in JupyterLab 3.6 (from the
    student copy, the helper not installed): anywidget's extension draws the same pictures, which
    follow the sliders and show the static twin's colours and numbers at both ends."""
    from tools.jupyterlab_driver import JupyterLab
    from tools.pictures import check_panels

    page = browser.new_page()
    errors = []
    # The stored notebooks' widget state was saved with the lock's ipywidgets 8 (controls 2.0) and
    # anywidget: the manager here cannot restore it when a notebook opens ("... is not registered
    # as a widget module") before Run All replaces it. The live pictures are check_panels' to judge.
    page.on("pageerror", lambda e: "is not registered as a widget module" not in str(e)
            and errors.append(f"uncaught: {e}"))
    problems = []
    with JupyterLab(student_copy, python=str(compat_python)) as server:
        for name in ("05_weighted_sum_and_self_attention.ipynb", "06_kv_cache_gqa.ipynb"):
            problems += check_panels(page, server, f"notebooks/{name}")
    page.close()
    assert not problems and not errors, "\n".join(problems + errors)


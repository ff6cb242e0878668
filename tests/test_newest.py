"""The course on the newest releases: what a hub or Colab installs today.

The helper declares ranges with no upper bound (pyproject.toml), so a class that
installs it today gets the newest numpy, matplotlib and ipywidgets, and the newest
ipykernel, not the lock's. This builds a second environment without the lock, with
the newest release of each runtime dependency in range and of the kernel, and runs
in it what depends most on them: the widget tests (what a move sends, the static twin),
every notebook under strict nbval with its robustness run, and the newest JupyterLab
drawing the panels' pictures in Chromium. So a release that changes the picture fails
the suite the day it comes out.

The environment is made once, in .cache/newest-venv/ (ATTENTION_NEWEST_VENV may put
it elsewhere), and brought up to the newest releases by uv at every run.
"""

import fcntl
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

from tools.project import RUNTIME, locked, uv_install

pytestmark = pytest.mark.newest

ROOT = Path(__file__).resolve().parents[1]
HOME = Path(os.environ.get("ATTENTION_NEWEST_VENV") or ROOT / ".cache" / "newest-venv")
KERNEL = ["ipykernel"]  # the kernel the notebooks run in: a hub installs its newest too
# What the inner pytest needs to run the widget tests and nbval (the helper itself is not
# installed: the tests import it from the clone, the notebooks' setup cell finds it).
TOOLS = ["pytest", "pytest-xdist", "nbval", "nbclient", "nbformat", "pillow", "packaging",
         "tomli; python_version < '3.11'",
         "jupyterlab"]  # and the newest JupyterLab 4 with its widget manager, for the browser test
SHOWN = [canonicalize_name(r.name) for r in RUNTIME] + KERNEL


@pytest.fixture(scope="session")
def newest_python():
    """The newest environment's Python, brought up to date once per session (both workers
    share one environment: a lock file lets one update it while the other waits)."""
    HOME.parent.mkdir(parents=True, exist_ok=True)
    python = HOME / "bin" / "python"
    with open(HOME.parent / f"{HOME.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())  # one pytest session
        stamp = HOME / f"updated-by-{run}"
        if not stamp.exists():
            if not python.exists():
                venv.create(HOME, with_pip=False)
            uv_install(python, "--upgrade", *(str(r) for r in RUNTIME), *KERNEL, *TOOLS)
            for old in HOME.glob("updated-by-*"):
                old.unlink()
            stamp.touch()
    return python


def versions(python) -> dict:
    code = ("import importlib.metadata as m, json, sys; "
            "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))")
    out = subprocess.run([python, "-c", code, *SHOWN], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def run_inner(python, target: str):
    found = versions(python)
    pins = locked(f"{sys.version_info[0]}.{sys.version_info[1]}")
    older = {n: (v, pins[n]) for n, v in found.items() if n in pins and Version(v) < Version(pins[n])}
    assert not older, f"the environment without the lock holds releases older than the lock's: {older}"
    result = subprocess.run([python, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-q",
                             "-W", "error::attention_helpers.widgets.KernelPictureWarning", target],
                            cwd=ROOT, capture_output=True, text=True, timeout=900)
    shown = ", ".join(f"{n} {v}" for n, v in found.items())
    tail = "\n".join(result.stdout.splitlines()[-60:])
    assert result.returncode == 0, f"{target} with the newest releases ({shown}) failed:\n{tail}"
    # the closing line names what ran: something did, and nothing was skipped
    last = result.stdout.strip().splitlines()[-1]
    assert " passed" in last and "skipped" not in last and "deselected" not in last, last


@pytest.mark.slow
def test_the_widget_tests_pass_with_the_newest_releases(newest_python):
    run_inner(newest_python, "tests/test_widgets.py")


@pytest.mark.slow
def test_every_notebook_passes_strict_nbval_and_its_robustness_run_with_the_newest_releases(newest_python):
    run_inner(newest_python, "notebooks")


@pytest.mark.slow
@pytest.mark.browser
def test_the_panels_draw_their_pictures_in_the_newest_jupyterlab(newest_python, browser, tmp_path):
    """The newest JupyterLab 4 and anywidget, ipywidgets and the rest at their newest releases: the
    pictures are drawn in the browser, follow the sliders and show the static twin at both ends."""
    from scripts.make_student_copy import write_copy
    from tools.jupyterlab_driver import JupyterLab
    from tools.pictures import check_panels

    copy = tmp_path / "attention-math"
    write_copy(copy)  # the notebooks next to the helper, which is not installed there
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    problems = []
    with JupyterLab(copy, python=str(newest_python)) as server:
        for name in ("06_kv_cache_gqa.ipynb", "09_tiled_attention.ipynb"):  # bars on a log axis, named states
            problems += check_panels(page, server, f"notebooks/{name}")
    page.close()
    assert not problems and not errors, "\n".join(problems + errors)


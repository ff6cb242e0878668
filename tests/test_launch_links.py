"""One repository address and one release tag: every launch link and the setup cell derive
from pyproject.toml, and no launch link opens HEAD or main (a push would change a running class).

Also the setup cell itself, simulated both ways: on Colab it pip-installs the
helper from that address; anywhere else it installs nothing and, in a clone
without the package installed, finds it next to notebooks/.
"""

import importlib.abc
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from scripts import set_repository
from tools.notebooks import ROOT, read

ALL_NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REPO = set_repository.repository()
TAG = set_repository.release_tag()


def setup_cell(path):
    return next(c for c in read(path).cells if c.cell_type == "code").source


def wrong_links(root, repo, tag):
    """Every launch link under `root` that does not name `repo` (OWNER/NAME), or opens another
    ref than `tag`."""
    wrong = []
    for path in set_repository.files(root):
        for kind, named, ref in set_repository.found_links(path.read_text()):
            expected = repo.split("/")[1] if kind == "nbgitpuller folder" else repo
            if named != expected:
                wrong.append(f"{path.relative_to(root)}: {kind} link names {named}, not {expected}")
            if kind in ("binder", "colab", "pip") and ref != tag:
                wrong.append(f"{path.relative_to(root)}: {kind} link opens {ref}, not the tag {tag}")
            branch = set_repository.pull_branch(root)
            if kind == "nbgitpuller" and ref != branch:
                wrong.append(f"{path.relative_to(root)}: nbgitpuller link opens {ref}, not {branch}")
    return wrong


def test_every_launch_link_names_the_repository_and_the_tag_of_pyproject():
    assert wrong_links(ROOT, REPO, TAG) == []


def test_the_tag_is_a_release_not_a_branch():
    assert set_repository.check_tag(TAG) == TAG
    for bad in ["HEAD", "main", "v1 .0", ""]:
        with pytest.raises(ValueError, match="tag must be a release tag"):
            set_repository.check_tag(bad)


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=[p.stem for p in ALL_NOTEBOOKS])
def test_title_cell_opens_this_notebook_on_binder_and_colab_at_the_tag(path):
    title = read(path).cells[0].source
    assert f"https://mybinder.org/v2/gh/{REPO}/{TAG}?urlpath=lab/tree/notebooks/{path.name})" in title
    assert f"https://colab.research.google.com/github/{REPO}/blob/{TAG}/notebooks/{path.name})" in title


def test_setup_cell_is_the_same_in_every_notebook_and_installs_the_tag():
    cells = {path.name: setup_cell(path) for path in ALL_NOTEBOOKS}
    first = cells[ALL_NOTEBOOKS[0].name]
    assert {name for name, cell in cells.items() if cell != first} == set()
    assert f'"git+https://github.com/{REPO}@{TAG}"' in first
    assert len(first.strip().splitlines()) <= 8, f"the setup cell has {len(first.strip().splitlines())} lines"


def test_hub_guide_has_an_nbgitpuller_link_per_notebook_on_the_release_branch():
    guide = (ROOT / "teachers" / "hub_admin.md").read_text()
    numbered = sorted(p for p in ALL_NOTEBOOKS if p.name[:2].isdigit())
    branch = set_repository.pull_branch()
    for path in numbered:
        assert (f"git-pull?repo=https://github.com/{REPO}&branch={branch}&urlpath=lab/tree/"
                f"{REPO.split('/')[1]}/notebooks/{path.name}") in guide, path.name


def test_rewrite_moves_address_and_tag_and_nothing_else():
    text = ("[b](https://mybinder.org/v2/gh/a/b/HEAD?urlpath=lab/tree/notebooks/x.ipynb) "
            "[c](https://colab.research.google.com/github/a/b/blob/main/notebooks/x.ipynb) "
            '"git+https://github.com/a/b" '
            "git-pull?repo=https://github.com/a/b&branch=main&urlpath=lab/tree/b/notebooks/x.ipynb "
            "https://github.com/a/other stays")
    assert set_repository.rewrite(text, "a/b", "c/d", "v2") == (
        "[b](https://mybinder.org/v2/gh/c/d/v2?urlpath=lab/tree/notebooks/x.ipynb) "
        "[c](https://colab.research.google.com/github/c/d/blob/v2/notebooks/x.ipynb) "
        '"git+https://github.com/c/d@v2" '
        "git-pull?repo=https://github.com/c/d&branch=release-v2&urlpath=lab/tree/d/notebooks/x.ipynb "
        "https://github.com/a/other stays")


def test_set_repository_rewrites_every_link_and_pyproject(tmp_path):
    for name in ["pyproject.toml", "README.md"]:
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    shutil.copytree(ROOT / "teachers", tmp_path / "teachers")
    changed = set_repository.set_repository("https://github.com/someone-else/attn-course", root=tmp_path,
                                            tag="v2027.1")
    assert set_repository.repository(tmp_path) == "someone-else/attn-course"
    assert set_repository.release_tag(tmp_path) == "v2027.1"
    assert wrong_links(tmp_path, "someone-else/attn-course", "v2027.1") == []
    assert tmp_path / "pyproject.toml" in changed
    # nothing else was touched: the notebooks are still valid, and a full link count survives
    for path in sorted((tmp_path / "notebooks").glob("*.ipynb")):
        json.loads(path.read_text())
    for path in set_repository.files(tmp_path):
        assert len(set_repository.found_links(path.read_text())) == \
            len(set_repository.found_links((ROOT / path.relative_to(tmp_path)).read_text()))


def test_set_repository_refuses_an_address_binder_and_colab_cannot_use(tmp_path):
    with pytest.raises(ValueError, match="url must be a GitHub address"):
        set_repository.set_repository("https://gitlab.com/someone/course", root=ROOT)


class _HideHelper(importlib.abc.MetaPathFinder):
    """Makes `import attention_helpers` fail as if the package were not installed, until
    `installed` is set (the fake pip did its job) or the clone's root is first on sys.path."""

    def __init__(self):
        self.installed = False

    def find_spec(self, name, path=None, target=None):
        on_path = sys.path and sys.path[0] == str(ROOT)
        if name.partition(".")[0] == "attention_helpers" and not (self.installed or on_path):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@pytest.fixture
def run_setup_cell(monkeypatch):
    """Run the setup cell's source with the helper hidden and subprocess.run recorded."""
    hide, calls = _HideHelper(), []

    def fake_run(args, **kwargs):
        calls.append(list(args))
        hide.installed = True
        return subprocess.CompletedProcess(args, 0)

    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.partition(".")[0] == "attention_helpers"}
    monkeypatch.setattr(sys, "meta_path", [hide, *sys.meta_path])
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.chdir(ROOT / "notebooks")
    options = np.get_printoptions()

    def run():
        namespace = {}
        exec(setup_cell(ALL_NOTEBOOKS[0]), namespace)
        return namespace, calls

    yield run
    np.set_printoptions(**options)
    for k in [k for k in sys.modules if k.partition(".")[0] == "attention_helpers"]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_setup_cell_on_colab_pip_installs_the_helper_from_the_repository(run_setup_cell, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    path_before = list(sys.path)
    namespace, calls = run_setup_cell()
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", f"git+https://github.com/{REPO}@{TAG}"]]
    assert sys.path == path_before
    assert namespace["ah"].__name__ == "attention_helpers"


def test_setup_cell_elsewhere_installs_nothing_and_finds_the_clone(run_setup_cell, monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    namespace, calls = run_setup_cell()
    assert calls == []
    assert sys.path[0] == str(ROOT)  # the folder above notebooks/
    assert namespace["ah"].softmax(np.zeros(2)).tolist() == [0.5, 0.5]


def test_setup_cell_leaves_an_installed_helper_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = list(sys.path)
    options = np.get_printoptions()
    try:
        exec(setup_cell(ALL_NOTEBOOKS[0]), {})
    finally:
        np.set_printoptions(**options)
    assert calls == [] and sys.path == before

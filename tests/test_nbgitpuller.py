"""Links a class clicks many times: two notebooks' nbgitpuller links, one after the other,
into the same folder, with a student's edit in between (marker `slow`).

Every notebook's link names the same repository and branch, so a student who opens 00's
link and then 01's has nbgitpuller pull twice into one folder. The first pull clones;
every later one runs `git diff ..origin/BRANCH` and `git merge origin/BRANCH`, which
exist only for a branch: with a tag the second click fails. This runs real nbgitpuller
(its GitPuller, what the hub's git-pull handler runs) against a local repository.
"""

import os
import subprocess

import pytest
from nbgitpuller.pull import GitPuller

from scripts.set_repository import release_branch, release_tag

pytestmark = pytest.mark.slow

RELEASE_TAG = release_tag()
RELEASE_BRANCH = release_branch(RELEASE_TAG)  # what the links name

GIT = {"GIT_AUTHOR_NAME": "teacher", "GIT_AUTHOR_EMAIL": "teacher@example.org",
       "GIT_COMMITTER_NAME": "teacher", "GIT_COMMITTER_EMAIL": "teacher@example.org"}


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT})


@pytest.fixture
def course(tmp_path):
    """A repository published as the release procedure leaves it: the release branch and tag."""
    work, remote = tmp_path / "work", tmp_path / "course.git"
    (work / "notebooks").mkdir(parents=True)
    for name in ("00_input_matrix.ipynb", "01_qkv_projections.ipynb"):
        (work / "notebooks" / name).write_text(f'{{"cells": [], "name": "{name}"}}\n')
    git("init", "-q", "-b", "main", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "the course", cwd=work)
    git("branch", RELEASE_BRANCH, cwd=work)
    git("tag", RELEASE_TAG, cwd=work)
    git("clone", "-q", "--bare", str(work), str(remote), cwd=tmp_path)
    return work, remote


def click(remote, home, branch):
    """What one nbgitpuller link does: clone into home/course the first time, else pull."""
    for _ in GitPuller(f"file://{remote}", str(home / "course"), branch=branch).pull():
        pass


def test_the_second_link_keeps_the_students_edit_and_brings_the_teachers_fix(course, tmp_path):
    work, remote = course
    home = tmp_path / "home"
    home.mkdir()
    click(remote, home, RELEASE_BRANCH)  # the link of 00
    edited = home / "course" / "notebooks" / "00_input_matrix.ipynb"
    edited.write_text('{"cells": ["the student\'s answer"]}\n')
    # the teacher fixes 01 on the release branch during the term
    git("checkout", "-q", RELEASE_BRANCH, cwd=work)
    (work / "notebooks" / "01_qkv_projections.ipynb").write_text('{"cells": ["fixed"]}\n')
    git("commit", "-q", "-am", "fix 01", cwd=work)
    git("push", "-q", str(remote), RELEASE_BRANCH, cwd=work)
    click(remote, home, RELEASE_BRANCH)  # the link of 01, into the same folder
    assert edited.read_text() == '{"cells": ["the student\'s answer"]}\n'
    assert "fixed" in (home / "course" / "notebooks" / "01_qkv_projections.ipynb").read_text()
    click(remote, home, RELEASE_BRANCH)  # and 00's link again, the next week
    assert edited.read_text() == '{"cells": ["the student\'s answer"]}\n'


def test_a_tag_in_the_link_fails_on_the_second_click(course, tmp_path):
    """Why the links name a branch: nbgitpuller clones a tag, then cannot pull it."""
    _, remote = course
    home = tmp_path / "home"
    home.mkdir()
    click(remote, home, RELEASE_TAG)
    with pytest.raises(subprocess.CalledProcessError) as failed:
        click(remote, home, RELEASE_TAG)
    assert f"origin/{RELEASE_TAG}" in " ".join(failed.value.cmd)  # git diff ..origin/TAG, or merge


def test_the_release_procedure_tags_and_branches_a_copy_whose_links_name_it(tmp_path):
    """scripts/release_student_copy.py on a copy of this clone: the tag and the release branch
    are one commit, the copy holds no answers, and its notebooks' links (and the teacher's
    hub guide's nbgitpuller links) name the students' repository at that tag and branch."""
    import shutil

    from scripts import release_student_copy, set_repository
    from tools.notebooks import ROOT

    teacher = tmp_path / "teacher"
    teacher.mkdir()
    for name in ["pyproject.toml", "README.md", "constraints.txt", "environment.yml", "LICENSE"]:
        shutil.copy(ROOT / name, teacher / name)
    for folder in ["notebooks", "teachers", "attention_helpers", "binder", "lab-settings"]:
        shutil.copytree(ROOT / folder, teacher / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "students"
    done = release_student_copy.release(out, "https://github.com/school/attn-students", "v2027.1",
                                        root=teacher)
    assert done["branch"] == "release-v2027.1"
    for ref in ("v2027.1", "release-v2027.1", "main"):
        assert release_student_copy.git("rev-parse", f"{ref}^{{commit}}", cwd=out).strip() == done["commit"]
    assert not (out / "solutions").exists() and not (out / "teachers").exists()
    assert release_student_copy.git("status", "--porcelain", cwd=out) == ""  # everything committed
    links = [link for path in (out / "notebooks").glob("*.ipynb")
             for link in set_repository.found_links(path.read_text())]
    assert links and all(named in ("school/attn-students", "attn-students") for _, named, _ in links)
    assert {ref for kind, _, ref in links if kind in ("binder", "colab", "pip")} == {"v2027.1"}
    guide = (teacher / "teachers" / "hub_admin.md").read_text()
    assert "git-pull?repo=https://github.com/school/attn-students&branch=release-v2027.1&" in guide
    # and a class pulls that branch twice into one folder
    home = tmp_path / "home"
    home.mkdir()
    click(out, home, "release-v2027.1")
    click(out, home, "release-v2027.1")
    assert (home / "course" / "notebooks" / "00_input_matrix.ipynb").exists()

"""Releases over a term (scripts/release_student_copy.py): a first release, then fixes into the
same students' repository with --update.

Quick: every refused run (a bad tag or address, a folder that is not the students' clean clone,
a tag already released, a branch main cannot fast-forward) names the argument and leaves this
clone and the students' clone as they were; a fix's kept branch is declared beside its tag.

Slow (marker `slow`): two fixes in a row are commits on top of main that a plain push publishes
(fast-forwards), each with a tag of its own and the term's branch moved to it, or the last tag
moved. Then a class over a term with real nbgitpuller (its GitPuller, what the hub's git-pull
handler runs) against a local bare repository standing for GitHub: v0.1.0 is pulled into a
student's folder, the student answers an exercise, the fix v0.1.1 is released and pushed, and
the link the student already has and the fix's own link pull it into that folder.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from scripts import release_student_copy
from scripts.release_student_copy import git, release
from scripts.set_repository import found_links, pull_branch, release_tag, set_repository
from tools.notebooks import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

URL = "https://github.com/school/attn-students"
PULL_LINK = re.compile(r"git-pull\?repo=(?P<repo>[^&\s]+)&branch=(?P<branch>[^&\s]+)&urlpath=lab/tree/"
                       r"(?P<folder>[^/\s]+)/notebooks/(?P<notebook>[\w.-]+\.ipynb)")
FIX = "\n\nFixed mid-term."  # what the teacher adds to a cell


def copy_of_this_clone(teacher: Path) -> Path:
    """What a release reads of a teacher's clone, copied (the real notebooks and kit)."""
    teacher.mkdir()
    for name in ["pyproject.toml", "README.md", "constraints.txt", "environment.yml", "LICENSE",
                 ".gitignore"]:
        shutil.copy(ROOT / name, teacher / name)
    for folder in ["notebooks", "teachers", "attention_helpers", "binder", "lab-settings"]:
        shutil.copytree(ROOT / folder, teacher / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return teacher


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` but git's own, and where `root` is a repository its refs."""
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(root).parts}
    refs = git("for-each-ref", cwd=root) if (root / ".git").exists() else None
    return {**files, ".git refs": refs}


def push(out: Path, remote: Path, refs: list[str]) -> None:
    """`git push` without --force (a `+` in refs forces that one ref, as the script prints it)."""
    git("push", "-q", str(remote), *refs, cwd=out)


def ref(repo: Path, name: str) -> str:
    return git("rev-parse", f"{name}^{{commit}}", cwd=repo).strip()


def first_release(tmp: Path) -> tuple[Path, Path, Path, dict]:
    """A teacher's clone, v0.1.0 released from it and pushed to a bare "GitHub" repository."""
    teacher = copy_of_this_clone(tmp / "teacher")
    out, remote = tmp / "students", tmp / "students.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp)
    done = release(out, URL, "v0.1.0", root=teacher)
    push(out, remote, done["push"])
    return teacher, out, remote, done


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    return first_release(tmp_path_factory.mktemp("term"))


def fresh_clone(remote: Path, tmp: Path) -> Path:
    """A clone of the students' repository as `git clone URL OUT_DIR` makes it on a teacher's
    second machine (only main local; the release branch as origin/...)."""
    git("clone", "-q", str(remote), str(tmp / "attn-students"), cwd=tmp)
    return tmp / "attn-students"


def test_a_refused_first_release_leaves_this_clone_untouched(tmp_path):
    """The issue's case: a first release into an existing folder used to fail after rewriting 19
    files of the clone."""
    teacher = copy_of_this_clone(tmp_path / "teacher")
    out = tmp_path / "students"
    out.mkdir()
    (out / "notes.txt").write_text("the teacher's")
    before = snapshot(teacher)
    with pytest.raises(ValueError, match="out_dir must be a new or empty folder .* add --update"):
        release(out, URL, "v0.1.0", root=teacher)
    assert snapshot(teacher) == before
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def _not_a_clone(clone, teacher):
    empty = clone.parent / "empty"
    empty.mkdir(exist_ok=True)
    return {"out": empty}


def _changes(clone, teacher):
    (clone / "notebooks" / "00_input_matrix.ipynb").write_text("{}")
    return {}


def _other_branch(clone, teacher):
    git("switch", "-q", "-c", "experiment", cwd=clone)
    return {}


def _diverged(clone, teacher):
    git("switch", "-q", "release-v0.1.0", cwd=clone)
    (clone / "README.md").write_text("a fix on the branch alone")
    git("commit", "-q", "-am", "fix on the branch", cwd=clone)
    git("switch", "-q", "main", cwd=clone)
    return {}


def _the_full_course(clone, teacher):
    (clone / "teachers").mkdir()
    (clone / "teachers" / "answers.md").write_text("model answers")
    git("add", "-A", cwd=clone)
    git("commit", "-q", "-m", "the course's answers", cwd=clone)
    return {}


REFUSED = {  # what is wrong: (how to make it, the message it gets)
    "a bad tag": (lambda clone, teacher: {"tag": "v0.1 .1"}, "tag must be a release tag"),
    "an address Binder cannot open": (lambda clone, teacher: {"url": "https://gitlab.com/school/attn"},
                                      "url must be a GitHub address"),
    "another students' repository": (lambda clone, teacher: {"url": "https://github.com/school/other"},
                                     "holds the students' repository school/attn-students, not url's "
                                     "school/other"),
    "a tag already released": (lambda clone, teacher: {"tag": "v0.1.0"},
                               r"tag v0.1.0 is already in out_dir .*e\.g\. --tag v0\.1\.1 .*--move-tag"),
    "moving a tag that is not the last": (lambda clone, teacher: {"move_tag": True},
                                          "--move-tag moves the tag of the last release, v0.1.0; got --tag "
                                          "v0.1.1"),
    "--move-tag on a first release": (lambda clone, teacher: {"update": False, "move_tag": True,
                                                              "tag": "v0.1.0"}, "use it with --update"),
    "a moved tag and nothing changed": (lambda clone, teacher: {"tag": "v0.1.0", "move_tag": True},
                                        "the student copy is the same as out_dir's main"),
    "a folder that is not a clone": (_not_a_clone, "out_dir must be a clone of the students' repository"),
    "the course's clone itself": (lambda clone, teacher: {"out": teacher}, "out_dir must be outside this "
                                                                           "clone"),
    "a clone with the teachers' kit": (_the_full_course, r"is not a student copy \(it has teachers/\)"),
    "uncommitted changes": (_changes, "has changes that are not committed .*00_input_matrix"),
    "a clone on another branch": (_other_branch, "out_dir must be on branch main"),
    "a fix on the release branch alone": (_diverged, "release-v0.1.0 in out_dir has commits that main has "
                                                     "not .*merge --ff-only"),
}
CHANGE_THE_CLONE = {_changes, _other_branch, _diverged, _the_full_course}


@pytest.mark.parametrize("case", REFUSED)
def test_a_refused_fix_names_the_argument_and_writes_nothing(case, released, tmp_path):
    teacher, out, remote, _ = released
    make, message = REFUSED[case]
    students = fresh_clone(remote, tmp_path) if make in CHANGE_THE_CLONE else out  # else unchanged
    args = {"out": students, "url": URL, "tag": "v0.1.1", "root": teacher, "update": True,
            **make(students, teacher)}
    before = snapshot(teacher), snapshot(students), git("symbolic-ref", "HEAD", cwd=students)
    with pytest.raises(ValueError, match=message):
        release(**args)
    assert (snapshot(teacher), snapshot(students), git("symbolic-ref", "HEAD", cwd=students)) == before


def test_the_command_line_says_what_was_refused(released, capsys):
    with pytest.raises(SystemExit):  # refused at the first check, before this clone is read
        release_student_copy.main([str(released[1]), URL, "--tag", "v0.1 .1", "--update"])
    assert "error: tag must be a release tag" in capsys.readouterr().err


def test_a_kept_branch_is_declared_beside_the_tag_and_a_new_term_drops_it(tmp_path):
    teacher = copy_of_this_clone(tmp_path / "teacher")

    def declared():
        guide = (teacher / "teachers" / "hub_admin.md").read_text()
        assert {m["branch"] for m in PULL_LINK.finditer(guide)} == {pull_branch(teacher)}
        return tomllib.loads((teacher / "pyproject.toml").read_text())["tool"]["attention-math"]

    set_repository(URL, root=teacher, tag="v0.1.0")
    set_repository(URL, root=teacher, tag="v0.1.1", branch="release-v0.1.0")  # a fix (--keep-branch)
    assert declared() == {"release-tag": "v0.1.1", "release-branch": "release-v0.1.0"}
    set_repository(URL, root=teacher)  # the address again, no tag: the links keep their branch
    assert declared() == {"release-tag": "v0.1.1", "release-branch": "release-v0.1.0"}
    set_repository(URL, root=teacher, tag="v0.2.0")  # a new term: the tag's own branch
    assert declared() == {"release-tag": "v0.2.0"} and pull_branch(teacher) == "release-v0.2.0"


@pytest.mark.slow
def test_fixes_are_fast_forwards_on_one_branch_with_a_tag_each(tmp_path):
    teacher, out, remote, first = first_release(tmp_path)
    for tag in ("v0.1.1", "v0.1.2"):
        before = ref(remote, "main")
        done = release(out, URL, tag, root=teacher, update=True)
        assert git("rev-parse", "HEAD^", cwd=out).strip() == before  # on top of the last release
        push(out, remote, done["push"])  # refused by git unless a fast-forward
        assert done["branch"] == "release-v0.1.0"  # the branch of the term, all term
        for name in ("main", "release-v0.1.0", tag):
            assert ref(remote, name) == done["commit"], name
    assert ref(remote, "v0.1.0") == first["commit"]  # links sent earlier open what they opened
    assert ref(remote, "v0.1.1") != done["commit"]
    assert git("branch", "--list", "release-v0.1.1", "release-v0.1.2", cwd=remote) == ""
    # the clone and the copy declare the tag and the kept branch, and every link follows them
    for root in (teacher, out):
        assert (release_tag(root), pull_branch(root)) == ("v0.1.2", "release-v0.1.0")
    guide = (teacher / "teachers" / "hub_admin.md").read_text()
    assert {m["branch"] for m in PULL_LINK.finditer(guide)} == {"release-v0.1.0"}
    links = [link for p in (out / "notebooks").glob("*.ipynb") for link in found_links(p.read_text())]
    assert {r for kind, _, r in links if kind in ("binder", "colab", "pip")} == {"v0.1.2"}


@pytest.mark.slow
def test_a_fix_keeps_what_git_ignores_in_the_students_clone(tmp_path):
    """A teacher's venv or checkpoints in the clone of the students' repository are not theirs to
    lose: a release replaces the committed files only (and a notebook the copy dropped goes)."""
    teacher, out, remote, _ = first_release(tmp_path)
    (out / ".venv" / "bin").mkdir(parents=True)
    (out / ".venv" / "bin" / "python").write_text("the teacher's venv")
    (out / "notebooks" / ".ipynb_checkpoints").mkdir()
    (out / "notebooks" / ".ipynb_checkpoints" / "00-checkpoint.ipynb").write_text("{}")
    (out / "old" / "deep").mkdir(parents=True)  # a folder of the last release the copy no longer has
    (out / "old" / "deep" / "notes.md").write_text("gone in the fix")
    git("add", "old", cwd=out)
    git("commit", "-q", "-m", "a folder of an earlier release", cwd=out)
    release(out, URL, "v0.1.1", root=teacher, update=True)
    assert (out / ".venv" / "bin" / "python").read_text() == "the teacher's venv"
    assert (out / "notebooks" / ".ipynb_checkpoints" / "00-checkpoint.ipynb").exists()
    assert not (out / "old").exists()
    assert git("status", "--porcelain", cwd=out) == ""


@pytest.mark.slow
def test_a_fix_from_a_fresh_clone_with_a_moved_tag(tmp_path):
    """--move-tag: the last release's tag moves onto the fix (a forced push of that tag only)."""
    teacher, _, remote, first = first_release(tmp_path)
    students = fresh_clone(remote, tmp_path)
    edit(teacher / "notebooks" / "01_qkv_projections.ipynb", summary, "", FIX)
    done = release(students, URL, "v0.1.0", root=teacher, update=True, move_tag=True)
    assert done["push"] == ["main", "release-v0.1.0", "+refs/tags/v0.1.0"]
    push(students, remote, done["push"])
    assert ref(remote, "v0.1.0") == ref(remote, "release-v0.1.0") == done["commit"] != first["commit"]
    assert git("rev-parse", "HEAD^", cwd=students).strip() == first["commit"]
    assert release_tag(teacher) == "v0.1.0" and pull_branch(teacher) == "release-v0.1.0"


# A class over a term, with real nbgitpuller.


def click(link: re.Match, remote: Path, home: Path) -> Path:
    """What one nbgitpuller link does in a student's home: clone its branch into the folder
    the link opens the first time, else fetch that branch and merge it (GitHub is `remote`)."""
    from nbgitpuller.pull import GitPuller

    assert link["repo"] == URL
    folder = home / link["folder"]
    for _ in GitPuller(f"file://{remote}", str(folder), branch=link["branch"]).pull():
        pass
    return folder / "notebooks"


def link_of(teacher: Path, notebook: str) -> re.Match:
    """The nbgitpuller link of `notebook` in the teacher's hub guide, as a class gets it."""
    guide = (teacher / "teachers" / "hub_admin.md").read_text()
    return next(m for m in PULL_LINK.finditer(guide) if m["notebook"] == notebook)


def cells(path: Path) -> dict[str, str]:
    """{cell id: source} of a notebook, which must still be a valid one."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return {c.id: c.source for c in notebook.cells}


def edit(path: Path, find, old: str, new: str) -> str:
    """Replace `old` by `new` (or with `old` "", append it) in the first cell `find` picks, and save
    the notebook as JupyterLab does (nbformat, the stored notebooks' own format); return its id."""
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if find(c))
    assert old in cell.source, f"{path.name} has no {old!r} in cell {cell.id}"
    cell.source = cell.source.replace(old, new) if old else cell.source + new
    nbformat.write(notebook, path)
    return cell.id


def first_exercise(cell) -> bool:
    return cell.cell_type == "code" and "# your code here" in cell.source


def summary(cell) -> bool:
    return cell.source.startswith("## Summary")


STUB, ANSWER = "None  # your code here", "np.stack([table[t] for t in sentence])  # my answer"


@pytest.fixture
def term(tmp_path):
    """v0.1.0 released and pulled by a student (00's link), who answers 00's first exercise."""
    teacher, out, remote, _ = first_release(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    old_link = link_of(teacher, "00_input_matrix.ipynb")
    folder = click(old_link, remote, home)
    answer = edit(folder / "00_input_matrix.ipynb", first_exercise, STUB, ANSWER)
    return teacher, out, remote, home, old_link, folder, answer


def release_fix(teacher, out, remote):
    done = release(out, URL, "v0.1.1", root=teacher, update=True)
    push(out, remote, done["push"])


@pytest.mark.slow
def test_a_fix_mid_term_reaches_the_students_folder_and_keeps_their_edit(term):
    teacher, out, remote, home, old_link, folder, answer = term
    fixed = {name: edit(teacher / "notebooks" / name, summary, "", FIX)  # the notebook they edited,
             for name in ("00_input_matrix.ipynb", "01_qkv_projections.ipynb")}  # and one they did not
    release_fix(teacher, out, remote)
    new_link = link_of(teacher, "01_qkv_projections.ipynb")  # the fix's link, in the old folder
    for link in (old_link, new_link):
        assert click(link, remote, home) == folder
        ours = cells(folder / "00_input_matrix.ipynb")
        assert ANSWER in ours[answer], "the student's answer is gone"
        for name, cell in fixed.items():
            assert cells(folder / name)[cell].endswith(FIX), f"the fix did not reach {name}"
        title = next(iter(ours.values()))
        assert "mybinder.org/v2/gh/school/attn-students/v0.1.1?" in title  # its links name the fix's tag


@pytest.mark.slow
def test_a_fix_to_the_line_the_student_changed_gives_way_to_their_edit(term):
    """nbgitpuller merges with -Xours: where the teacher's fix and the student's edit change the
    same lines, the student's stay, and the notebook stays valid. Renaming the notebook and
    clicking again brings the fixed one back beside theirs."""
    teacher, out, remote, home, old_link, folder, answer = term
    hint = "None  # your code here: one row of X per token"
    edit(teacher / "notebooks" / "00_input_matrix.ipynb", first_exercise, STUB, hint)
    release_fix(teacher, out, remote)
    click(old_link, remote, home)
    assert ANSWER in cells(folder / "00_input_matrix.ipynb")[answer]
    assert hint not in cells(folder / "00_input_matrix.ipynb")[answer]
    (folder / "00_input_matrix.ipynb").rename(folder / "00_mine.ipynb")
    click(old_link, remote, home)
    assert hint in cells(folder / "00_input_matrix.ipynb")[answer]
    assert ANSWER in cells(folder / "00_mine.ipynb")[answer]


@pytest.mark.slow
def test_nbgitpuller_cannot_follow_a_new_branch_in_an_old_folder(term):
    """Why a fix keeps the term's branch: a folder cloned from release-v0.1.0 fetches that branch
    only, so a link naming release-v0.1.1 fails in it (git exit 128), as the issue saw."""
    teacher, out, remote, home, old_link, folder, answer = term
    git("push", "-q", str(remote), "main:refs/heads/release-v0.1.1", cwd=out)
    renamed = PULL_LINK.match(old_link[0].replace("release-v0.1.0", "release-v0.1.1"))
    with pytest.raises(subprocess.CalledProcessError) as failed:
        click(renamed, remote, home)
    assert failed.value.returncode == 128

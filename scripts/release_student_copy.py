"""Release the course to students, and release fixes to the same students during the term.

    python -m scripts.release_student_copy OUT_DIR https://github.com/OWNER/NAME --tag v0.1.0
    python -m scripts.release_student_copy OUT_DIR https://github.com/OWNER/NAME --tag v0.1.1 --update

The first release makes the students' repository in OUT_DIR, a new folder:

1. set_repository: this clone's links (notebooks, READMEs, teachers/) name the
   students' repository and the tag, nbgitpuller's the release branch `release-<tag>`;
2. the student copy is written from the clone so changed (no solutions/, no teachers/);
3. it is committed in a new repository in OUT_DIR, on `main`;
4. that commit gets the tag (Binder, Colab, pip) and the release branch (nbgitpuller,
   which pulls again at every click and cannot pull a tag).

A fix mid-term (--update) goes into the same students' repository: OUT_DIR is a clone of
it (the folder the first release made, or `git clone URL OUT_DIR`). The new copy is
committed on top of OUT_DIR's `main`, so the push is a fast-forward; it gets the new
tag, and the term's branch moves to it. That branch keeps its name all term, in the fix's
links too: nbgitpuller clones one branch (`git clone --depth 1 --branch B`) and later
fetches and merges only B, so a folder cloned from release-v0.1.0 fails on a link naming
release-v0.1.1 (git exit 128). With one branch moved forward, the links students already
have bring the fix at their next click, and the fix's links work in their old folders.
Binder, Colab and pip name the tag: the fix's links open the new tag, links sent earlier
keep the old one, unless --move-tag moves the old tag onto the fix instead.

Every check (the tag, the address, OUT_DIR and its branches and tags) runs before
anything is written: a refused run leaves this clone and OUT_DIR as they were.

Then push what the run prints (`git -C OUT_DIR push URL main ...`), and commit this
clone's rewritten links. Done the other way round (tag first, links after), the tagged
notebooks would point at the full repository and its solutions.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from scripts.make_student_copy import NEVER, write_copy
from scripts.set_repository import (
    ROOT,
    check_tag,
    owner_name,
    pull_branch,
    release_branch,
    release_tag,
    repository,
    set_repository,
)

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "attention-math release", "GIT_AUTHOR_EMAIL": "release@localhost"}


def git(*args: str, cwd: Path, check: bool = True) -> str | None:
    """git's output; with check=False, None where git fails (a question such as "is there a tag?")."""
    env = {**GIT_IDENTITY, **{k.replace("AUTHOR", "COMMITTER"): v for k, v in GIT_IDENTITY.items()},
           **os.environ}  # the user's own identity, where git has one, wins
    done = subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True, env=env)
    return done.stdout if done.returncode == 0 else None


def next_patch(tag: str) -> str:
    """v0.1.0 -> v0.1.1, for the messages; a tag of another shape gets a suffix."""
    match = re.fullmatch(r"(.*?)(\d+)", tag)
    return f"{match[1]}{int(match[2]) + 1}" if match else f"{tag}.1"


def check_first_release(out: Path, move_tag: bool) -> None:
    if move_tag:
        raise ValueError("--move-tag moves the tag of an earlier release: use it with --update")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"out_dir must be a new or empty folder for a first release, got {out}, which "
                         f"is not (a fix for the same students goes into their repository: add --update)")


def check_students_clone(out: Path, url: str, tag: str, move_tag: bool) -> str:
    """For --update: that OUT is a clean clone of the students' repository of `url`, on main, whose
    term's branch main can fast-forward, and that `tag` is new (or, with --move-tag, its last
    release's). Returns the branch nbgitpuller links name."""
    top = git("rev-parse", "--show-toplevel", cwd=out, check=False) if out.is_dir() else None
    if top is None or Path(top.strip()).resolve() != out.resolve():
        raise ValueError(f"out_dir must be a clone of the students' repository for --update (the folder "
                         f"the first release made, or: git clone {url} {out}), got {out}, which is not one")
    if git("symbolic-ref", "-q", "HEAD", cwd=out, check=False) != "refs/heads/main\n":
        raise ValueError(f"out_dir must be on branch main (a fix is a commit on top of it): "
                         f"git -C {out} switch main")
    changes = git("status", "--porcelain", cwd=out).splitlines()
    if changes:
        raise ValueError(f"out_dir {out} has changes that are not committed ({', '.join(changes[:3])}): "
                         f"a release replaces every committed file there (what git ignores stays), so "
                         f"commit or discard them first")
    found = [f"{name}/" for name in NEVER if (out / name).exists()]
    if found or not (out / "pyproject.toml").is_file():
        has = " and ".join(found) or "no pyproject.toml"
        raise ValueError(f"out_dir {out} is not a student copy (it has {has}): give the clone of the "
                         f"students' repository, not the course's")
    if repository(out) != owner_name(url):
        raise ValueError(f"out_dir {out} holds the students' repository {repository(out)}, not url's "
                         f"{owner_name(url)}: another repository, or a typo in one of them")
    branch = pull_branch(out)  # what the links in the students' hands name
    at = next((ref for ref in (branch, f"origin/{branch}")
               if git("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", cwd=out, check=False)), None)
    if at is None:
        raise ValueError(f"out_dir {out} has no branch {branch}, which its nbgitpuller links name: "
                         f"clone the students' repository again (git clone {url})")
    if git("merge-base", "--is-ancestor", at, "main", cwd=out, check=False) is None:
        raise ValueError(f"{branch} in out_dir has commits that main has not (a fix committed on the branch "
                         f"alone?): bring them into main first, git -C {out} merge --ff-only {at}")
    has_tag = git("rev-parse", "-q", "--verify", f"refs/tags/{tag}", cwd=out, check=False) is not None
    last = release_tag(out)
    if move_tag and tag != last:
        raise ValueError(f"--move-tag moves the tag of the last release, {last}; got --tag {tag}")
    if move_tag and not has_tag:
        raise ValueError(f"--move-tag moves a tag, and out_dir {out} has no tag {tag} (leave out "
                         f"--move-tag to add it)")
    if has_tag and not move_tag:
        raise ValueError(f"tag {tag} is already in out_dir {out}: a fix needs a new tag, e.g. --tag "
                         f"{next_patch(last)} (or --move-tag, to move {tag} onto the fix)")
    return branch


def check(out: Path, url: str, tag: str, root: Path, update: bool, move_tag: bool) -> str:
    """Every check of a release, before anything is written; returns the branch of its links."""
    check_tag(tag)
    owner_name(url)
    repository(root)  # this clone declares its address and its tag (each raises if not)
    release_tag(root)
    if out.resolve() == root.resolve() or root.resolve() in out.resolve().parents:
        raise ValueError(f"out_dir must be outside this clone (e.g. ../{owner_name(url).split('/')[1]}), "
                         f"got {out}")
    if not update:
        check_first_release(out, move_tag)
        return release_branch(tag)
    return check_students_clone(out, url, tag, move_tag)


def replace_files(out: Path, copy: Path) -> None:
    """OUT's committed files (there are no others but ignored ones: checked) become the copy's.
    .git and what git ignores there (a teacher's .venv/, .ipynb_checkpoints/) stay."""
    tracked = [out / name for name in git("ls-files", "-z", cwd=out).split("\0") if name]
    for path in tracked:
        path.unlink()
    for folder in sorted({p for path in tracked for p in path.parents if out in p.parents},
                         key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()  # emptied: a folder the copy no longer has goes with its files
    shutil.copytree(copy, out, dirs_exist_ok=True)


def release(out: Path, url: str, tag: str, root: Path = ROOT, update: bool = False,
            move_tag: bool = False) -> dict:
    """A first release (steps 1-4), or with `update` a fix on top of OUT's main; return
    {"commit", "tag", "branch", "rewrote", "push"}: push is what `git push URL` then publishes."""
    out = Path(out)
    branch = check(out, url, tag, root, update, move_tag)
    rewrote = set_repository(url, root=root, tag=tag, branch=branch)
    with tempfile.TemporaryDirectory() as tmp:
        write_copy(Path(tmp) / "copy", root=root)
        if not update:
            out.mkdir(parents=True, exist_ok=True)
            git("init", "-q", "-b", "main", cwd=out)
        replace_files(out, Path(tmp) / "copy")
    git("add", "-A", ".", cwd=out)
    if update and git("diff", "--cached", "--quiet", cwd=out, check=False) is not None:
        raise ValueError(f"the student copy is the same as out_dir's main: nothing to release as {tag} "
                         f"(nothing committed)")
    git("commit", "-q", "-m", f"Student copy of the attention-math course, release {tag}", cwd=out)
    git("tag", *(["-f"] if move_tag else []), tag, cwd=out)
    git("branch", "-f", branch, "main", cwd=out)  # a fast-forward: checked
    push = ["main", branch, f"+refs/tags/{tag}" if move_tag else tag]
    return {"commit": git("rev-parse", "HEAD", cwd=out).strip(), "tag": tag, "branch": branch,
            "rewrote": rewrote, "push": push}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path,
                        help="a new folder for the students' repository; with --update, a clone of it")
    parser.add_argument("url", help="the students' repository, https://github.com/OWNER/NAME")
    parser.add_argument("--tag", required=True, help="the release tag, e.g. v0.1.0; a fix's, v0.1.1")
    parser.add_argument("--update", action="store_true",
                        help="a fix mid-term: a new commit on top of out_dir's main, the same branch "
                             "for nbgitpuller, a new tag")
    parser.add_argument("--move-tag", action="store_true",
                        help="with --update: move the last release's tag onto the fix instead of adding "
                             "one, so Binder, Colab and pip links sent earlier open the fix too")
    args = parser.parse_args(argv)
    try:
        done = release(args.out_dir, args.url, args.tag, update=args.update, move_tag=args.move_tag)
    except ValueError as refused:
        parser.error(str(refused))
    print(f"rewrote {len(done['rewrote'])} files of this clone; committed the student copy as "
          f"{done['commit'][:12]}, tagged {done['tag']}, branch {done['branch']}.\n"
          f"Now: git -C {args.out_dir} push {args.url} {' '.join(done['push'])}"
          f"  (and commit this clone's links)")


if __name__ == "__main__":
    main()

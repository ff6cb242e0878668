"""Release the course to students: every step, in the order that leaves no link wrong.

    python -m scripts.release_student_copy OUT_DIR https://github.com/OWNER/NAME --tag v2027.1

1. set_repository: this clone's links (notebooks, READMEs, teachers/) name the
   students' repository and the tag, nbgitpuller's the release branch `release-<tag>`;
2. the student copy is written from the clone so changed (no solutions/, no teachers/);
3. it is committed in a new repository in OUT_DIR, on `main`;
4. that commit gets the tag (Binder, Colab, pip) and the release branch (nbgitpuller,
   which pulls again at every click and cannot pull a tag).

Then push it: `git -C OUT_DIR push URL main TAG release-TAG`, and commit this clone's
rewritten links. Done the other way round (tag first, links after), the tagged
notebooks would point at the full repository and its solutions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

from scripts.make_student_copy import write_copy
from scripts.set_repository import ROOT, check_tag, release_branch, set_repository

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "attention-math release", "GIT_AUTHOR_EMAIL": "release@localhost"}


def git(*args: str, cwd: Path) -> str:
    env = {**GIT_IDENTITY, **{k.replace("AUTHOR", "COMMITTER"): v for k, v in GIT_IDENTITY.items()},
           **os.environ}  # the user's own identity, where git has one, wins
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def release(out: Path, url: str, tag: str, root: Path = ROOT) -> dict:
    """Do steps 1-4; return {"commit", "tag", "branch", "rewrote"} (what a push then publishes)."""
    tag = check_tag(tag)
    rewrote = set_repository(url, root=root, tag=tag)
    write_copy(out, root=root)
    git("init", "-q", "-b", "main", cwd=out)
    git("add", ".", cwd=out)
    git("commit", "-q", "-m", f"Student copy of the attention-math course, release {tag}", cwd=out)
    git("tag", tag, cwd=out)
    git("branch", release_branch(tag), cwd=out)
    return {"commit": git("rev-parse", "HEAD", cwd=out).strip(), "tag": tag, "branch": release_branch(tag),
            "rewrote": rewrote}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="a new folder for the students' repository")
    parser.add_argument("url", help="the students' repository, https://github.com/OWNER/NAME")
    parser.add_argument("--tag", required=True, help="the release tag, e.g. v2027.1")
    args = parser.parse_args(argv)
    done = release(args.out_dir, args.url, args.tag)
    print(f"rewrote {len(done['rewrote'])} files of this clone; committed the student copy as "
          f"{done['commit'][:12]}, tagged {done['tag']}, branch {done['branch']}.\n"
          f"Now: git -C {args.out_dir} push {args.url} "
          f"main {done['tag']} {done['branch']}  (and commit this clone's links)")


if __name__ == "__main__":
    main()

"""Publish the course under another GitHub address, or at another release tag, with one command.

    python -m scripts.set_repository https://github.com/OWNER/NAME              # the address
    python -m scripts.set_repository https://github.com/OWNER/NAME --tag v2027.1  # and the tag
    python -m scripts.set_repository https://github.com/OWNER/NAME --tag v2027.2 --keep-branch  # a fix

The address is declared once, as `Repository` under [project.urls] in
pyproject.toml, and the release tag once, as `release-tag` under
[tool.attention-math]. Launch links name the tag, not HEAD or main, so a push
during a term changes nothing in a running class. nbgitpuller links name a
branch instead, made at the same commit: nbgitpuller pulls again at every later
click, and a tag cannot be pulled (tests/test_nbgitpuller.py). A release's branch
is `release-<tag>` (release_branch), and it stays the branch for the term: a
student's folder fetches only the branch it was cloned from, so a fix mid-term
(--keep-branch, or scripts/release_student_copy.py --update) moves that branch
and keeps its name in the links, declared as `release-branch` beside the tag
(pull_branch). This script changes the declarations and rewrites every link that
derives from them: the Binder and
Colab links in every notebook, the README, notebooks/README.md and every file
of teachers/, the nbgitpuller links and image recipes, and the setup cell's
`pip install git+<address>@<tag>` that Colab runs. tests/test_launch_links.py
checks that they all agree with pyproject.toml.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

KEPT_BRANCH_NOTE = "# the branch students' folders pull, kept over the term's fixes"

# Every kind of link that names the repository; group "repo" is OWNER/NAME, group "ref" the
# branch or tag it opens (None where the link names none).
LINKS = {
    "binder": re.compile(r"https://mybinder\.org/v2/gh/(?P<repo>[\w.-]+/[\w.-]+)/(?P<ref>[\w.-]+)"),
    "colab": re.compile(r"https://colab\.research\.google\.com/github/(?P<repo>[\w.-]+/[\w.-]+)/blob/"
                        r"(?P<ref>[\w.-]+)/"),
    "nbgitpuller": re.compile(r"git-pull\?repo=https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)"
                              r"&branch=(?P<ref>[\w.-]+)&"),
    "pip": re.compile(r"git\+https://github\.com/(?P<repo>[\w.-]+?/[\w-]+(?:\.(?!git\b)[\w-]+)*)"
                      r"(?:\.git)?(?:@(?P<ref>[\w.-]+))?"),
    "git clone": re.compile(r"git clone (?:[^\n]*?--branch (?P<ref>[\w.-]+) )?[^\n]*?"
                            r"https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)"),
    # nbgitpuller clones into a folder named after the repository
    "nbgitpuller folder": re.compile(r"urlpath=lab/tree/(?P<name>[\w.-]+)/notebooks/"),
}


def files(root: Path = ROOT) -> list[Path]:
    """The files whose links derive from the address: notebooks, READMEs, the teachers' kit."""
    return sorted([root / "README.md", *(root / "notebooks").glob("*.ipynb"),
                   *(root / "notebooks").glob("*.md"), *(root / "teachers").rglob("*.md")])


def _pyproject(root: Path) -> str:
    return (root / "pyproject.toml").read_text()


def repository(root: Path = ROOT) -> str:
    """OWNER/NAME from pyproject.toml's [project.urls] Repository."""
    match = re.search(r'^Repository\s*=\s*"([^"]+)"', _pyproject(root), re.M)
    if not match:
        raise ValueError(f"{root / 'pyproject.toml'} has no Repository under [project.urls]")
    return owner_name(match[1])


def release_tag(root: Path = ROOT) -> str:
    """The release tag the launch links open, from pyproject.toml's [tool.attention-math]."""
    match = re.search(r'^release-tag\s*=\s*"([^"]+)"', _pyproject(root), re.M)
    if not match:
        raise ValueError(f'{root / "pyproject.toml"} has no release-tag = "..." under [tool.attention-math]')
    return match[1]


def release_branch(tag: str) -> str:
    """The branch nbgitpuller links open for release `tag`: made at the tag's commit, it moves
    only when the teacher pushes a fix to it."""
    return f"release-{tag}"


def pull_branch(root: Path = ROOT) -> str:
    """The branch nbgitpuller links name: pyproject.toml's `release-branch` where a fix mid-term
    kept the branch students' folders pull, else the release's own, release_branch(release_tag)."""
    match = re.search(r'^release-branch\s*=\s*"([^"]+)"', _pyproject(root), re.M)
    return match[1] if match else release_branch(release_tag(root))


def owner_name(url: str) -> str:
    match = GITHUB.fullmatch(url)
    if not match:
        raise ValueError(f"url must be a GitHub address https://github.com/OWNER/NAME "
                         f"(Binder and Colab links need one), got {url!r}")
    return f"{match[1]}/{match[2]}"


def check_tag(tag: str) -> str:
    if not TAG.fullmatch(tag) or tag in ("HEAD", "main", "master"):
        raise ValueError(f"tag must be a release tag such as v1.0 (letters, digits, '.', '_', '-'; "
                         f"not HEAD or a branch), got {tag!r}")
    return tag


def found_links(text: str) -> list[tuple[str, str, str | None]]:
    """(kind, what it names, ref) for every repository link in `text`: OWNER/NAME, or NAME for a
    folder (whose ref is None)."""
    return [(kind, m.groupdict().get("repo") or m["name"], m.groupdict().get("ref"))
            for kind, regex in LINKS.items() for m in regex.finditer(text)]


def _replace_group(match, group: str, new: str) -> str:
    start, end = match.span(group)
    offset = match.start()
    return match[0][:start - offset] + new + match[0][end - offset:]


def rewrite(text: str, old: str, new: str, tag: str | None = None, branch: str | None = None) -> str:
    """`text` with every link to `old` (OWNER/NAME) pointing at `new`, at `tag` if given (and
    nbgitpuller's at `branch`, by default release_branch(tag))."""
    old_name, new_name = old.split("/")[1], new.split("/")[1]

    def one(kind):
        def sub(match):
            if kind == "nbgitpuller folder":
                return match[0].replace(f"/{old_name}/", f"/{new_name}/") if match["name"] == old_name \
                    else match[0]
            if match["repo"] != old:
                return match[0]
            out = match[0]
            if tag is not None and match["ref"] is not None:
                ref = (branch or release_branch(tag)) if kind == "nbgitpuller" else tag
                out = _replace_group(match, "ref", ref)
            elif tag is not None and kind == "pip":
                out = f"{out}@{tag}"
            return out.replace(old, new)
        return sub

    for kind, regex in LINKS.items():
        text = regex.sub(one(kind), text)
    return text


def set_repository(url: str, root: Path = ROOT, tag: str | None = None,
                   branch: str | None = None) -> list[Path]:
    """Point every launch link (and pyproject.toml) at `url`, and at `tag` if given; nbgitpuller's
    at `branch`, by default the new tag's release_branch (a new term), or without a tag the branch
    they name now. Return the files changed: none is written before every one is worked out."""
    new, old = owner_name(url), repository(root)
    if tag is None:
        tag, branch = release_tag(root), branch or pull_branch(root)
    tag = check_tag(tag)
    branch = branch or release_branch(tag)
    if not TAG.fullmatch(branch):
        raise ValueError(f"branch must be a branch name such as release-v1.0, got {branch!r}")
    pyproject = root / "pyproject.toml"
    text = _pyproject(root)
    updated = re.sub(r'^(Repository\s*=\s*")[^"]+(")', rf"\g<1>https://github.com/{new}\g<2>", text,
                     count=1, flags=re.M)
    updated = re.sub(r'^(release-tag\s*=\s*")[^"]+(")', rf"\g<1>{tag}\g<2>", updated, count=1, flags=re.M)
    updated = re.sub(r'^release-branch\s*=.*\n', "", updated, flags=re.M)
    if branch != release_branch(tag):  # declared only where it is not the tag's own
        line = f'release-branch = "{branch}"  {KEPT_BRANCH_NOTE}'
        updated = re.sub(r'^release-tag\s*=.*$', lambda m: f"{m[0]}\n{line}", updated, count=1, flags=re.M)
    texts = {pyproject: (text, updated)}  # (before, after) of every file, then the writes
    for path in files(root):
        before = path.read_text()
        texts[path] = (before, rewrite(before, old, new, tag, branch))
    changed = [path for path, (before, after) in texts.items() if after != before]
    for path in changed:
        path.write_text(texts[path][1])
    return changed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the repository's address, https://github.com/OWNER/NAME")
    parser.add_argument("--tag", help="the release tag the links open (default: the one in pyproject.toml)")
    parser.add_argument("--keep-branch", action="store_true",
                        help="a fix mid-term: nbgitpuller links keep the branch they name now, the one "
                             "students' folders pull (move that branch to the fix's commit)")
    args = parser.parse_args(argv)
    branch = pull_branch() if args.keep_branch else None
    for path in set_repository(args.url, tag=args.tag, branch=branch):
        print(f"rewrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

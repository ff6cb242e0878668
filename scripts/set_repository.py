"""Publish the course under another GitHub address, or at another release tag, with one command.

    python -m scripts.set_repository https://github.com/OWNER/NAME              # the address
    python -m scripts.set_repository https://github.com/OWNER/NAME --tag v2027.1  # and the tag

The address is declared once, as `Repository` under [project.urls] in
pyproject.toml, and the release tag once, as `release-tag` under
[tool.attention-math]. Launch links name the tag, not HEAD or main, so a push
during a term changes nothing in a running class. nbgitpuller links name the
release branch instead, `release-<tag>` (release_branch), made at the same commit:
nbgitpuller pulls again at every later click, and a tag cannot be pulled
(tests/test_nbgitpuller.py). This script changes both
declarations and rewrites every link that derives from them: the Binder and
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
        raise ValueError("pyproject.toml has no Repository under [project.urls]")
    return owner_name(match[1])


def release_tag(root: Path = ROOT) -> str:
    """The release tag the launch links open, from pyproject.toml's [tool.attention-math]."""
    match = re.search(r'^release-tag\s*=\s*"([^"]+)"', _pyproject(root), re.M)
    if not match:
        raise ValueError('pyproject.toml has no release-tag = "..." under [tool.attention-math]')
    return match[1]


def release_branch(tag: str) -> str:
    """The branch nbgitpuller links open for release `tag`: made at the tag's commit, it moves
    only when the teacher pushes a fix to it."""
    return f"release-{tag}"


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


def rewrite(text: str, old: str, new: str, tag: str | None = None) -> str:
    """`text` with every link to `old` (OWNER/NAME) pointing at `new`, at `tag` if given."""
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
                out = _replace_group(match, "ref", release_branch(tag) if kind == "nbgitpuller" else tag)
            elif tag is not None and kind == "pip":
                out = f"{out}@{tag}"
            return out.replace(old, new)
        return sub

    for kind, regex in LINKS.items():
        text = regex.sub(one(kind), text)
    return text


def set_repository(url: str, root: Path = ROOT, tag: str | None = None) -> list[Path]:
    """Point every launch link (and pyproject.toml) at `url`, and at `tag` if given;
    return the files changed."""
    new, old = owner_name(url), repository(root)
    tag = check_tag(tag) if tag is not None else release_tag(root)
    changed = []
    pyproject = root / "pyproject.toml"
    text = _pyproject(root)
    updated = re.sub(r'^(Repository\s*=\s*")[^"]+(")', rf"\g<1>https://github.com/{new}\g<2>", text,
                     count=1, flags=re.M)
    updated = re.sub(r'^(release-tag\s*=\s*")[^"]+(")', rf"\g<1>{tag}\g<2>", updated, count=1, flags=re.M)
    for path in [pyproject, *files(root)]:
        before = text if path == pyproject else path.read_text()
        after = updated if path == pyproject else rewrite(before, old, new, tag)
        if after != before:
            path.write_text(after)
            changed.append(path)
    return changed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the repository's address, https://github.com/OWNER/NAME")
    parser.add_argument("--tag", help="the release tag the links open (default: the one in pyproject.toml)")
    args = parser.parse_args(argv)
    for path in set_repository(args.url, tag=args.tag):
        print(f"rewrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

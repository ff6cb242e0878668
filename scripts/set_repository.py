"""Publish the course under another GitHub address with one command.

    python scripts/set_repository.py https://github.com/OWNER/NAME

The address is declared once, as `Repository` under [project.urls] in
pyproject.toml. This script changes it there and rewrites every link that
derives from it: the Binder and Colab links in every notebook, the README and
the teacher's guide, the guide's nbgitpuller links and image recipes, and
the setup cell's `pip install git+<address>` that Colab runs. tests/test_launch_links.py
checks that they all agree with pyproject.toml.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")

# Every kind of link that names the repository; group "repo" is OWNER/NAME.
LINKS = {
    "binder": re.compile(r"https://mybinder\.org/v2/gh/(?P<repo>[\w.-]+/[\w.-]+)/"),
    "colab": re.compile(r"https://colab\.research\.google\.com/github/(?P<repo>[\w.-]+/[\w.-]+)/"),
    "nbgitpuller": re.compile(r"git-pull\?repo=https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)&"),
    "pip": re.compile(r"git\+https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)"),
    "git clone": re.compile(r"git clone [^\n]*?https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)"),
    # nbgitpuller clones into a folder named after the repository
    "nbgitpuller folder": re.compile(r"urlpath=lab/tree/(?P<name>[\w.-]+)/notebooks/"),
}


def files(root: Path = ROOT) -> list[Path]:
    """The files whose links derive from the address: notebooks, READMEs, the guide."""
    return sorted([root / "README.md", *(root / "notebooks").glob("*.ipynb"),
                   *(root / "notebooks").glob("*.md")])


def repository(root: Path = ROOT) -> str:
    """OWNER/NAME from pyproject.toml's [project.urls] Repository."""
    text = (root / "pyproject.toml").read_text()
    match = re.search(r'^Repository\s*=\s*"([^"]+)"', text, re.M)
    if not match:
        raise ValueError("pyproject.toml has no Repository under [project.urls]")
    return owner_name(match[1])


def owner_name(url: str) -> str:
    match = GITHUB.fullmatch(url)
    if not match:
        raise ValueError(f"url must be a GitHub address https://github.com/OWNER/NAME "
                         f"(Binder and Colab links need one), got {url!r}")
    return f"{match[1]}/{match[2]}"


def found_links(text: str) -> list[tuple[str, str]]:
    """(kind, what it names) for every repository link in `text`: OWNER/NAME, or NAME for a folder."""
    return [(kind, m.groupdict().get("repo") or m["name"])
            for kind, regex in LINKS.items() for m in regex.finditer(text)]


def rewrite(text: str, old: str, new: str) -> str:
    old_name, new_name = old.split("/")[1], new.split("/")[1]
    for kind, regex in LINKS.items():
        if kind == "nbgitpuller folder":
            text = regex.sub(lambda m: m[0].replace(f"/{old_name}/", f"/{new_name}/"), text)
        else:
            text = regex.sub(lambda m: m[0].replace(old, new), text)
    return text.replace(f"https://github.com/{old}", f"https://github.com/{new}")


def set_repository(url: str, root: Path = ROOT) -> list[Path]:
    """Point every launch link (and pyproject.toml) at `url`; return the files changed."""
    new, old = owner_name(url), repository(root)
    changed = []
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text()
    updated = re.sub(r'^(Repository\s*=\s*")[^"]+(")', rf"\g<1>https://github.com/{new}\g<2>", text,
                     count=1, flags=re.M)
    for path in [pyproject, *files(root)]:
        before = text if path == pyproject else path.read_text()
        after = updated if path == pyproject else rewrite(before, old, new)
        if after != before:
            path.write_text(after)
            changed.append(path)
    return changed


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for path in set_repository(sys.argv[1]):
        print(f"rewrote {path.relative_to(ROOT)}")

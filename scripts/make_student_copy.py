"""Write a student copy of the repository: what students need, no answers.

    python -m scripts.make_student_copy OUT_DIR

OUT_DIR gets the notebooks and the cheat sheet (notebooks/), the helper package
(attention_helpers/), the files that launch them (pyproject.toml, the lock,
environment.yml, binder/, lab-settings/), LICENSE and CITATION.cff, and a
README for students. It gets no solutions/, no teachers/, and no tests or
scripts (several read the solutions). A teacher pushes OUT_DIR as the
repository that Binder, Colab and nbgitpuller links point at (teachers/handing_out.md
says how); tests/test_student_copy.py builds one and runs every notebook from it.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ["pyproject.toml", "constraints.txt", "environment.yml", "LICENSE", "CITATION.cff", ".gitignore"]
FOLDERS = ["notebooks", "attention_helpers", "binder", "lab-settings"]
NEVER = ("solutions", "teachers", "tests", "scripts")  # answers, or code that reads them
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def student_readme(root: Path = ROOT) -> str:
    """notebooks/README.md as the copy's top README: its links made relative to the top."""
    text = (root / "notebooks" / "README.md").read_text(encoding="utf-8")

    def moved(match):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#", target, re.I):
            return match.group(0)
        return f"]({(Path('notebooks') / target).as_posix()})"
    return LINK.sub(moved, text)


def write_copy(out: Path, root: Path = ROOT) -> list[Path]:
    """Write the student copy into `out` (which must not exist or be empty); return its files."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"out must be a new or empty folder, got {out} with files in it")
    out.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        if (root / name).exists():
            shutil.copy2(root / name, out / name)
    for name in FOLDERS:
        shutil.copytree(root / name, out / name, ignore=IGNORE)
    (out / "README.md").write_text(student_readme(root), encoding="utf-8")
    leaked = [name for name in NEVER if (out / name).exists()]
    if leaked:  # a folder list gone wrong must not hand out answers
        raise RuntimeError(f"the student copy would contain {leaked}")
    return sorted(p for p in out.rglob("*") if p.is_file())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="a new folder for the student copy")
    args = parser.parse_args(argv)
    written = write_copy(args.out_dir)
    print(f"wrote {len(written)} files into {args.out_dir}: push it as the students' repository")


if __name__ == "__main__":
    main()

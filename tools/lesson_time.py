"""How long a notebook takes in class, by the course's reading-time model.

    minutes = prose words / 120 + 0.75 per code cell + 5 per panel + 6 per check

What counts, precisely:

- **prose words**: the words of every markdown cell, where a word is a run of
  letters or digits (so "Q·Kᵀ" is two words and "0.75" is two); link targets
  `](…)`, HTML tags and LaTeX commands such as `\\mathrm` are left out first,
  because a student does not read them as words.
- **code cell**: every code cell, the setup cell included, whether or not it is
  a panel or a check (reading and running it takes the 0.75 minutes; the panel
  and the check add their own time on top).
- **panel**: a code cell tagged `nbval-ignore-output` whose source mentions a
  panel or widget, i.e. the cell that shows a live panel (the cell that builds
  an `ah.Panel` and the cell that displays it are one panel, counted once, at the
  cell where the student plays with it).
- **check**: a code cell that calls `ah.checks.check_…` (one exercise).

`python -m tools.lesson_time` prints the table for every numbered notebook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))

WORDS_PER_MINUTE = 120
PER_CODE_CELL = 0.75
PER_PANEL = 5
PER_CHECK = 6
LIMIT = 55

WORD = re.compile(r"[^\W_]+")
CHECK = re.compile(r"\bah\.checks\.check_\w+\s*\(")


@dataclass(frozen=True)
class LessonTime:
    name: str
    words: int
    code_cells: int
    panels: int
    checks: int

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + PER_CODE_CELL * self.code_cells
                + PER_PANEL * self.panels + PER_CHECK * self.checks)


def prose_words(markdown: str) -> int:
    text = re.sub(r"\]\([^)]*\)", "]", markdown)  # link targets
    text = re.sub(r"<[^>]+>", " ", text)  # HTML tags
    text = re.sub(r"\\[A-Za-z]+", " ", text)  # LaTeX commands
    return len(WORD.findall(text))


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def is_panel(cell) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return (cell["cell_type"] == "code" and "nbval-ignore-output" in tags
            and re.search(r"panel|widget|Panel", _source(cell)) is not None)


def is_check(cell) -> bool:
    return cell["cell_type"] == "code" and CHECK.search(_source(cell)) is not None


def lesson_time(path: Path) -> LessonTime:
    """The parts of `path`'s reading time; `.minutes` is the total."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return minutes_of(cells, Path(path).stem)


def minutes_of(cells, name: str = "") -> LessonTime:
    """The reading time of some cells (a notebook's, or the part of it a lesson plan runs)."""
    return LessonTime(
        name=name,
        words=sum(prose_words(_source(c)) for c in cells if c["cell_type"] == "markdown"),
        code_cells=sum(c["cell_type"] == "code" for c in cells),
        panels=sum(is_panel(c) for c in cells),
        checks=sum(is_check(c) for c in cells),
    )


def table(paths=NOTEBOOKS) -> str:
    rows = [f"{'notebook':<36} {'words':>5} {'code':>4} {'panels':>6} {'checks':>6} {'minutes':>7}"]
    for path in paths:
        t = lesson_time(path)
        flag = "  over" if t.minutes > LIMIT else ""
        rows.append(f"{t.name:<36} {t.words:>5} {t.code_cells:>4} {t.panels:>6} {t.checks:>6} "
                    f"{t.minutes:>7.1f}{flag}")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())

"""The lesson plans in teachers/: which sections of which notebook each row runs, and how
long that takes by the course's model (tools.lesson_time), for tests/test_lesson_plans.py.

A plan is a markdown table, one row per slot: `| 5–12 | [00](../notebooks/00_….ipynb) |
Steps 1–3 | model | … |`. The time column is minutes ("5–12") or hours ("0:10–0:40");
the "run" column names the sections the class runs ("Steps 1–3, Live"), and the
"model" column the minutes they take by the model. The title, "You will learn" and
the setup cell always run.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from tools.lesson_time import minutes_of

ROOT = Path(__file__).resolve().parents[1]
PLANS = [ROOT / "teachers" / "plan_90_minutes.md", ROOT / "teachers" / "plan_half_day.md"]
ALWAYS = {"title", "You will learn"}  # the goal, the outline and the setup cell
SLOT = re.compile(r"^\|\s*([\d:]+)\s*[–-]\s*([\d:]+)\s*\|([^|]*)\|([^|]*)\|([^|]*)\|", re.M)
NOTEBOOK = re.compile(r"\[(\d\d\w?)\]\(\.\./notebooks/([\w]+\.ipynb)\)")


def section_names(text: str) -> list[str]:
    """'Steps 1–3, 5, Live' -> ['Step 1', 'Step 2', 'Step 3', 'Step 5', 'Live']."""
    names, numbered = [], False
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = re.fullmatch(r"(?:(Steps?)\s+)?(\d+)(?:\s*[–-]\s*(\d+))?", item)
        if match and (match[1] or numbered):
            numbered = True
            last = int(match[3] or match[2])
            names += [f"Step {k}" for k in range(int(match[2]), last + 1)]
        else:
            numbered = False
            names.append(item)
    return names


def minute(text: str) -> int:
    """'12' -> 12, '1:45' -> 105."""
    hours, _, minutes = text.rpartition(":")
    return int(hours or 0) * 60 + int(minutes)


def slots(path: Path) -> list[dict]:
    """Every timed row of a plan: start and end (minutes), the notebook (number and file) or
    None, the sections it runs, and the minutes its "model" column states (or None)."""
    found = []
    for start, end, where, run, model in SLOT.findall(path.read_text(encoding="utf-8")):
        notebook = NOTEBOOK.search(where)
        found.append({"start": minute(start), "end": minute(end),
                      "notebook": notebook.groups() if notebook else None,
                      "run": section_names(run) if notebook else [],
                      "model": float(model) if re.fullmatch(r"\s*\d+(\.\d+)?\s*", model) else None})
    return found


def plan_rows(path: Path) -> dict[str, tuple[str, list[str]]]:
    """{notebook number: (file name, sections to run)} from a plan's table."""
    rows = {}
    for slot in slots(path):
        if slot["notebook"]:
            number, name = slot["notebook"]
            if number in rows:
                raise ValueError(f"{path.name} lists notebook {number} twice")
            rows[number] = (name, slot["run"])
    return rows


def section_of(cell, current: str) -> str:
    """The section a cell opens (its level-2 heading), or `current`."""
    if cell.cell_type == "markdown":
        for line in cell.source.splitlines():
            match = re.match(r"##\s+(Step \d+|[^·]+?)(?:\s+·.*)?$", line)
            if match and not line.startswith("###"):
                return match[1].strip()
    return current


def sections(nb) -> list[str]:
    current, names = "title", []
    for cell in nb.cells:
        current = section_of(cell, current)
        names.append(current)
    return names


def kept_notebook(path: Path, keep: list[str]):
    """The notebook with only the sections `keep` (and the title, outline and setup cell)."""
    nb = nbformat.read(path, as_version=4)
    names = sections(nb)
    unknown = set(keep) - set(names)
    if unknown:
        raise ValueError(f"{path.name} has no section {sorted(unknown)}; it has {sorted(set(names))}")
    nb.cells = [cell for cell, name in zip(nb.cells, names) if name in ALWAYS or name in keep]
    return nb


def run_minutes(path: Path, keep: list[str]) -> float:
    """The model's minutes for what a plan's row asks students to run."""
    return minutes_of(kept_notebook(path, keep).cells).minutes

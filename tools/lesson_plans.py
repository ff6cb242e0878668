"""The lesson plans in teachers/, and the steps the teachers' kit cites, for
tests/test_lesson_plans.py and tests/test_exit_tickets.py.

A plan is a markdown table, one row per slot:

    | time | notebook | run | model | on the projector | stop and ask | homework |

- **time**: minutes ("10–19") or hours ("0:10–0:39");
- **notebook**: a link to the notebook, or the slot's kind when it has none, "launch",
  "break" or "exit ticket", then perhaps a colon and what to do ("launch: hand out …");
- **run**: the sections the students run ("Steps 1–3, Live"; "–" for none); the title,
  "You will learn" and the setup cell always run;
- **model**: the minutes those sections take by the course's model (tools.lesson_time);
- **on the projector**: the sections the teacher shows on the projector, each with a panel;
- **stop and ask**: the questions, each "Step 3: *…*", the section it is asked at and the
  question word for word as the notebook's note writes it, with its answer.

Any further column (the homework) is for the reader. A slot must hold its model minutes plus
the plans' allowances: so many minutes per stop-and-ask question and per panel on the
projector, the launch (the first slot), and so many minutes per exit-ticket question (the
exit-ticket slot). The allowances are a table of the 90-minute plan, "| allowance | minutes |
why |", which the half-day plan links to.

A cited step is "Step 4", "Steps 1–3", "Step 3b" (a sub-step's "### 3b ·" heading), in a
notebook's note, in answers.md under a notebook's heading, or in a plan's row, of that
notebook unless the text names another ("notebook 10 (Step 1)", "10's Step 1"); an exit
ticket names its own, with the heading: "*(01 · Step 2 · Three weight matrices)*", several
separated by "; ". "The panel (Step 8)" claims that Step 8 holds the notebook's panel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools.lesson_time import is_panel, minutes_of

ROOT = Path(__file__).resolve().parents[1]
TEACHERS = ROOT / "teachers"
PLANS = [TEACHERS / "plan_90_minutes.md", TEACHERS / "plan_half_day.md"]
ALLOWANCES_PLAN = PLANS[0]  # the plan that states the allowances; the other links to them
ALWAYS = {"title", "You will learn"}  # the goal, the outline and the setup cell
COLUMNS = ("time", "notebook", "run", "model", "on the projector", "stop and ask")
KINDS = ("launch", "break", "exit ticket")  # a slot without a notebook
NOTEBOOK = re.compile(r"\[(\d\d[a-z]?)\]\(\.\./notebooks/(\w+\.ipynb)\)")
ASK = re.compile(r"(?:(?P<where>[^*:<>]+?):\s*)?\*(?P<question>[^*]+)\*")
# allowance -> how its row of the allowances table starts
ALLOWANCES = {"launch": "the launch", "question": "each stop-and-ask question",
              "panel": "each panel on the projector", "ticket": "each exit-ticket question"}


# ---- the plans' tables -----------------------------------------------------------------------------

def section_names(text: str) -> list[str]:
    """'Steps 1–3, 5, Live' -> ['Step 1', 'Step 2', 'Step 3', 'Step 5', 'Live']; '–' -> []."""
    names, numbered = [], False
    for item in (part.strip() for part in text.split(",")):
        if not item or item in "–-":
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


def cells_of(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table(text: str, first: str) -> list[dict[str, str]]:
    """The rows of the first markdown table of `text` whose header starts with `first`, each as
    {header: cell}."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("|") and cells_of(line)[0].lower() == first:
            header = [h.lower() for h in cells_of(line)]
            rows = []
            for row in lines[k + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(header, cells_of(row))))
            return rows
    return []


def asks(cell: str) -> list[tuple[str | None, str]]:
    """'Step 3: *q?*<br>Live: *r?*' -> [('Step 3', 'q?'), ('Live', 'r?')]."""
    found = []
    for match in ASK.finditer(cell):
        found.append((match["where"] and match["where"].strip(), " ".join(match["question"].split())))
    return found


def slots(path_or_text: Path | str) -> list[dict]:
    """Every timed row of a plan: start and end (minutes), its kind ("notebook", "launch", "break",
    "exit ticket" or "other"), the notebook (number, file) or None, the sections the students run
    and the teacher shows, the minutes its "model" column states (or None), and its questions."""
    text = path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    plan = path_or_text.name if isinstance(path_or_text, Path) else "the plan"
    found = []
    for row in table(text, "time"):
        missing = [c for c in COLUMNS if c not in row]  # zip above drops the cells of a short row
        if missing:
            raise ValueError(f"{plan}: the row at {row.get('time')!r} has no {missing} column (a cell "
                             f"missing, or the table's header lacks it)")
        times = re.fullmatch(r"([\d:]+)\s*[–-]\s*([\d:]+)", row["time"])
        if times is None:
            raise ValueError(f"{plan}: the time {row['time']!r} is not a span such as 0:00–0:10")
        start, end = times.groups()
        notebook = NOTEBOOK.search(row["notebook"])
        name = row["notebook"].split(":")[0].strip("* ").lower()  # "launch: hand out …" -> launch
        kind = "notebook" if notebook else name if name in KINDS else "other"
        model = row["model"]
        found.append({"start": minute(start), "end": minute(end), "kind": kind,
                      "notebook": notebook.groups() if notebook else None,
                      "run": section_names(row["run"]) if notebook else [],
                      "projector": section_names(row["on the projector"]) if notebook else [],
                      "model": float(model) if re.fullmatch(r"\d+(\.\d+)?", model) else None,
                      "asks": asks(row["stop and ask"]), "row": row})
    return found


def plan_rows(path: Path) -> dict[str, tuple[str, list[str]]]:
    """{notebook number: (file name, sections to run)}: the notebooks the students open, in order
    (a notebook only shown on the projector is not among them)."""
    rows = {}
    for slot in slots(path):
        if slot["notebook"] and slot["run"]:
            number, name = slot["notebook"]
            if number in rows:
                raise ValueError(f"{path.name} lists notebook {number} twice")
            rows[number] = (name, slot["run"])
    return rows


def taught(path: Path) -> dict[str, tuple[str, list[str]]]:
    """{notebook number: (file name, sections run or shown)}: what the plan teaches of each
    notebook, the students' sections and the projector's, in the notebook's order."""
    rows = {}
    for slot in slots(path):
        if slot["notebook"]:
            number, name = slot["notebook"]
            nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
            wanted = set(slot["run"]) | set(slot["projector"])
            rows[number] = (name, [s for s in dict.fromkeys(sections(nb)) if s in wanted])
    return rows


def allowances(path: Path = ALLOWANCES_PLAN) -> dict[str, float]:
    """{"launch" | "question" | "panel" | "ticket": minutes} from the plan's allowances table."""
    found = {}
    for row in table(path.read_text(encoding="utf-8"), "allowance"):
        for key, start in ALLOWANCES.items():
            if row["allowance"].lower().startswith(start):
                found[key] = float(row["minutes"])
    if set(found) != set(ALLOWANCES):
        raise ValueError(f"{path.name}: the allowances table lacks {sorted(set(ALLOWANCES) - set(found))}")
    return found


def ticket(text: str) -> list[tuple[str, list[tuple[str, str, str | None]]]]:
    """The numbered questions after a plan's "## Exit ticket": (the question without its
    references, [(notebook, step, heading or None), …])."""
    if "## Exit ticket" not in text:
        raise ValueError("the plan has no '## Exit ticket' heading, which its questions follow")
    block = text[text.index("## Exit ticket"):]
    found = []
    for question in re.findall(r"^\d+\. .*?(?=^\d+\. |^#|\Z)", block, re.M | re.S):
        question = " ".join(question.split())
        refs = [ref for refs in REF.findall(question) for ref in explicit_refs(refs)]
        found.append((" ".join(REF.sub("", re.sub(r"^\d+\. ", "", question)).split()), refs))
    return found


def panels(name: str, names: list[str]) -> dict[str, int]:
    """{section: how many panels it holds} for some sections of a notebook."""
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    return {wanted: sum(is_panel(c) for c, s in zip(nb.cells, sections(nb)) if s == wanted)
            for wanted in names}


def needed(slot: dict, allow: dict[str, float], questions_on_ticket: int) -> float:
    """The minutes a slot must hold: its model minutes, the questions and the projector's
    panels; the launch; or the exit ticket's questions. A break needs nothing."""
    if slot["kind"] == "launch":
        return allow["launch"]
    if slot["kind"] == "exit ticket":
        return allow["ticket"] * questions_on_ticket
    minutes = 0.0
    if slot["notebook"]:
        name = slot["notebook"][1]
        minutes = run_minutes(ROOT / "notebooks" / name, slot["run"]) if slot["run"] else 0.0
        minutes += allow["panel"] * sum(panels(name, slot["projector"]).values())
    return minutes + allow["question"] * len(slot["asks"])


def fit_problems(text: str, name: str, length: int, allow: dict[str, float],
                 breaks: tuple[int, int] | None) -> list[str]:
    """Where a plan's slots do not hold what they need (needed()), do not follow one another,
    run past `length`, state a model other than the model's, show on the projector a section
    with no panel, ask at a section the row neither runs nor shows, or, with `breaks` = (every,
    at least), go longer than `every` minutes without a break or have a break shorter than
    `at least`."""
    found, problems = slots(text), []
    if not found:
        return [f"{name}: no table of slots"]
    if found[0]["kind"] != "launch" or found[-1]["kind"] != "exit ticket":
        problems.append(f"{name}: the first slot must be the launch and the last the exit ticket")
    if found[0]["start"] != 0 or found[-1]["end"] > length:
        problems.append(f"{name}: the slots run from {found[0]['start']} to {found[-1]['end']}, "
                        f"not within 0–{length}")
    for before, after in zip(found, found[1:]):
        if before["end"] != after["start"]:
            problems.append(f"{name}: a gap or an overlap at minute {before['end']}")
    questions = len(ticket(text))
    for slot in found:
        label = f"{name}, {slot['notebook'][0] if slot['notebook'] else slot['kind']}"
        if slot["notebook"]:
            file = slot["notebook"][1]
            model = run_minutes(ROOT / "notebooks" / file, slot["run"]) if slot["run"] else None
            if slot["model"] != (None if model is None else round(model, 1)):
                problems.append(f"{label}: the model column says {slot['model']}, the model "
                                f"{'nothing run' if model is None else f'{model:.1f}'}")
            for section, count in panels(file, slot["projector"]).items():
                if count == 0:
                    problems.append(f"{label}: {section}, on the projector, has no panel")
            for where, question in slot["asks"]:
                if where not in slot["run"] + slot["projector"]:
                    problems.append(f"{label}: {question[:40]!r} is asked at {where}, "
                                    "which the row neither runs nor shows")
        length_of_slot, need = slot["end"] - slot["start"], needed(slot, allow, questions)
        if length_of_slot < need:
            problems.append(f"{label}: {need:.1f} min in a {length_of_slot}-minute slot")
    if breaks is not None:
        every, at_least = breaks
        stretch_start, end = 0, {"kind": "end", "start": found[-1]["end"], "end": found[-1]["end"]}
        for slot in found + [end]:
            if slot["kind"] in ("break", "end"):
                if slot["start"] - stretch_start > every:
                    problems.append(f"{name}: {slot['start'] - stretch_start} minutes without a break "
                                    f"from minute {stretch_start}")
                if slot["kind"] == "break" and slot["end"] - slot["start"] < at_least:
                    problems.append(f"{name}: a break of {slot['end'] - slot['start']} minutes at minute "
                                    f"{slot['start']}, less than {at_least}")
                stretch_start = slot["end"]
    return problems


# ---- the notebooks' sections and headings ---------------------------------------------------------------

def section_of(cell, current: str) -> str:
    """The section a cell opens (its level-2 heading), or `current`."""
    if cell.cell_type == "markdown":
        for line in cell.source.splitlines():
            if match := re.match(r"##\s+(Step \d+|[^·]+?)(?:\s+·.*)?$", line):  # not "###": \s+
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


def notebook_path(number: str) -> Path | None:
    found = sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    return found[0] if found else None


def step_section(step: str) -> str:
    """The section a step is taught in: "Step 3b" -> "Step 3" (a sub-step lies in its step)."""
    return re.sub(r"(Step \d+)[a-z]$", r"\1", step)


def plain(heading: str) -> str:
    """A heading as a reader sees it: no $…$, \\sqrt{x} as √x, no backticks, single spaces."""
    text = re.sub(r"\\sqrt\{([^}]*)\}", r"√\1", heading)
    text = re.sub(r"\\[a-zA-Z]+|[$`{}]|\\[!,;]", "", text)
    return " ".join(text.split())


def headings(nb) -> dict[str, str]:
    """{"Step 1": its title, "Step 3b": a sub-step's title, "Live": …, "Summary": "", …}."""
    found, step = {}, None
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if match := re.match(r"##\s+(Step (\d+)|[^·#]+?)(?:\s+·\s+(.*))?\s*$", line):  # not "###"
                found[match[1].strip()] = plain(match[3] or "")
                step = match[2]
            elif (match := re.match(r"###\s+(\d+)([a-z])\s+·\s+(.*)$", line)) and match[1] == step:
                found[f"Step {match[1]}{match[2]}"] = plain(match[3])
    return found


def panel_places(nb) -> set[str]:
    """The sections and sub-steps ("Step 1d") that hold a panel."""
    found, section, sub = set(), "title", None
    for cell in nb.cells:
        new = section_of(cell, section)
        if new != section:
            section, sub = new, None
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if match := re.match(r"###\s+(\d+[a-z])\s+·", line):
                    sub = f"Step {match[1]}"
        if is_panel(cell):
            found |= {section} | ({sub} if sub else set())
    return found


# ---- steps cited in the kit -------------------------------------------------------------------------------

REF = re.compile(r"\*\((\d\d[a-z]? · .+?)\)\*")
EXPLICIT = re.compile(r"(\d\d[a-z]?) · (Step \d+[a-z]?|Live|Summary|Try this)(?: · (.+))?")
STEPS = re.compile(
    r"(?:(?P<other>\b\d\d[a-z]?)['’]s |notebook (?P<named>\d\d[a-z]?) \()?"
    r"\bSteps? (?P<first>\d+[a-z]?)(?P<more>(?:\s*(?:[–-]|,|and|or)\s*[1-9]\d*[a-z]?\b)*)")
PANEL_CLAIM = re.compile(r"[Tt]he panel \((Step \d+[a-z]?|Live section)\)|\b(Step \d+[a-z]?)['’]s panel"
                         r"|\b(Step \d+[a-z]?) panel\b")


@dataclass(frozen=True)
class Citation:
    where: str  # the file, and the paragraph's first words
    notebook: str | None
    step: str  # "Step 4", "Step 3b", "Live"
    heading: str | None = None  # the heading the citation claims, if it names one
    panel: bool = False  # it claims the step holds the panel


def explicit_refs(text: str) -> list[tuple[str, str, str | None]]:
    """'01 · Step 2 · Three weight matrices; 02 · Step 4' -> [(number, step, heading or None), …];
    a part that is no reference comes back as (text, '', None)."""
    found = []
    for part in text.split("; "):
        match = EXPLICIT.fullmatch(part.strip())
        found.append((match[1], match[2], match[3] and match[3].strip()) if match else (part, "", None))
    return found


def _numbers(first: str, more: str) -> list[str]:
    """'1' + '–3, 5' -> ['1', '2', '3', '5']."""
    found, parts = [first], re.findall(r"([–-]|,|and|or)\s*([1-9]\d*[a-z]?)", more)
    for separator, number in parts:
        if separator in "–-" and found[-1].isdigit() and number.isdigit():
            found += [str(k) for k in range(int(found[-1]) + 1, int(number) + 1)]
        else:
            found.append(number)
    return found


def citations_in(text: str, default: str | None, where: str) -> list[Citation]:
    """The steps one paragraph (or table row) of the kit cites, of the notebook `default` unless
    it names another."""
    flat = " ".join(text.split())
    found = [Citation(where, number, step, heading) for refs in REF.findall(flat)
             for number, step, heading in explicit_refs(refs)]
    prose = REF.sub("", flat)
    for match in STEPS.finditer(prose):
        number = match["other"] or match["named"] or default
        for step in _numbers(match["first"], match["more"]):
            found.append(Citation(where, number, f"Step {step}"))
    for match in PANEL_CLAIM.finditer(prose):
        step = next(group for group in match.groups() if group)
        found.append(Citation(where, default, "Live" if step == "Live section" else step, panel=True))
    return found


def kit_files() -> dict[str, str]:
    """{path relative to teachers/: text} of the notes, answers.md and the plans."""
    paths = [*sorted((TEACHERS / "notes").glob("*.md")), TEACHERS / "answers.md", *PLANS]
    return {str(p.relative_to(TEACHERS)): p.read_text(encoding="utf-8") for p in paths}


def kit_citations(files: dict[str, str] | None = None) -> list[Citation]:
    """Every step cited by the notes, answers.md and the plans (tickets and tables), paragraph by
    paragraph; `files` ({path relative to teachers/: text}) replaces the files on disk."""
    found = []
    files = kit_files() if files is None else files
    for name, text in files.items():
        note = re.fullmatch(r"notes/(\d\d[a-z]?)_\w+\.md", name)
        default = note[1] if note else None
        text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # code is not prose
        for paragraph in re.split(r"\n\s*\n", text):
            table_rows = paragraph.lstrip().startswith("|")
            for line in paragraph.splitlines() if table_rows else re.split(r"\n(?=- |\d+\. )", paragraph):
                if not note:
                    if heading := re.match(r"^(#+) (?:(\d\d[a-z]?) · )?", line):
                        # answers.md: a notebook's heading sets the notebook, any other heading clears it
                        default = heading[2]
                    if line.startswith("|") and (row := NOTEBOOK.search(line)):
                        found += citations_in(line, row[1], f"{name}: {line[:50]}")
                        continue
                found += citations_in(line, default, f"{name}: {' '.join(line.split())[:50]}")
    return found


def citation_problems(cited: list[Citation]) -> list[str]:
    """The citations whose notebook, step, heading or panel is not there, each problem once (a
    sentence may cite one step as a step and as the panel's place)."""
    problems, notebooks = [], {}
    for c in cited:
        path = notebook_path(c.notebook) if c.notebook else None
        if path is None:
            problems.append(f"{c.where}: {c.step or '?'} of {c.notebook or 'no notebook named'}, "
                            "which does not exist")
            continue
        if path not in notebooks:
            nb = nbformat.read(path, as_version=4)
            notebooks[path] = (headings(nb), panel_places(nb))
        titles, with_panel = notebooks[path]
        if c.step not in titles:
            problems.append(f"{c.where}: {c.notebook} has no {c.step or repr(c.notebook)}")
        elif c.heading is not None and plain(c.heading) != titles[c.step]:
            problems.append(f"{c.where}: {c.notebook} · {c.step} is {titles[c.step]!r}, not {c.heading!r}")
        elif c.panel and c.step not in with_panel:
            problems.append(f"{c.where}: {c.notebook} · {c.step} holds no panel")
    return list(dict.fromkeys(problems))


# ---- the questions asked in class, and their answers ------------------------------------------------------

QUESTION_SECTIONS = ("At the steps", "At the panel")


def note_path(number: str) -> Path:
    return next((TEACHERS / "notes").glob(f"{number}_*.md"))


def note_questions(text: str) -> dict[str, str]:
    """{question: answer} of a note's "## At the steps" and "## At the panel": each bullet
    "- *question* answer"."""
    found = {}
    for title in QUESTION_SECTIONS:
        match = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        if not match:
            continue
        for bullet in re.findall(r"^- (.*?)(?=^- |^\S|\Z)", match[1], re.M | re.S):
            if question := re.match(r"\*([^*]+)\*(.*)", " ".join(bullet.split())):
                found[question[1].strip()] = question[2].strip()
    return found


def words(text: str) -> list[str]:
    """Lower-case words and numbers ("0.1" one of them), as a reader compares two questions."""
    return re.findall(r"\d+(?:\.\d+)?|[^\W\d_]+", text.lower())


def longest_shared_run(a: str, b: str) -> tuple[int, str]:
    """The longest run of consecutive words two texts share: its length and the words."""
    x, y = words(a), words(b)
    best, end, row = 0, 0, [0] * (len(y) + 1)
    for i in range(1, len(x) + 1):
        new = [0] * (len(y) + 1)
        for j in range(1, len(y) + 1):
            if x[i - 1] == y[j - 1]:
                new[j] = row[j - 1] + 1
                if new[j] > best:
                    best, end = new[j], i
        row = new
    return best, " ".join(x[end - best:end])


NUMBER_LIST = re.compile(r"-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?){2,}")


def number_lists(text: str) -> set[str]:
    """Lists of three numbers or more ("3.2, 4.0, 1.0"), without their spaces."""
    return {re.sub(r"\s+", "", m) for m in NUMBER_LIST.findall(text)}


def in_class_questions() -> list[tuple[str, str]]:
    """(where, text) of everything a class is asked in class or as homework: the plans'
    stop-and-ask questions, the notes' questions, and each notebook's written question,
    try-this and exercises."""
    found = []
    for plan in PLANS:
        found += [(plan.name, q) for slot in slots(plan) for _, q in slot["asks"]]
    for note in sorted((TEACHERS / "notes").glob("*.md")):
        found += [(note.name, q) for q in note_questions(note.read_text(encoding="utf-8"))]
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell, section in zip(nb.cells, sections(nb)):
            if cell.cell_type == "markdown" and section in ("In your own words", "Exercises", "Try this"):
                found.append((f"{path.name}, {section}", cell.source))
    return found


def in_class_material() -> str:
    """The text of every notebook (markdown and code) and note: the numbers a class has met."""
    parts = [p.read_text(encoding="utf-8") for p in sorted((TEACHERS / "notes").glob("*.md"))]
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        parts += [c.source for c in nbformat.read(path, as_version=4).cells]
    return "\n".join(parts)

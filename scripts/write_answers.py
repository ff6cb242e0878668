"""Write the coded exercises' answers into teachers/answers.md, from solutions/.

    python -m scripts.write_answers          # rewrites the section between the markers
    python -m scripts.write_answers --check  # exits 1 if the file is not what it would write

Each exercise's answer is the code the nbgrader course puts in its answer cell:
the statements of solutions/nbNN.py that bind the names the stub binds, with
what they need that the notebook does not define (scripts/make_nbgrader_course.py
finds both), so answers.md, the graded course and the tests read one source.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

from scripts.make_nbgrader_course import (
    exercise_notebooks,
    exercises,
    notebook_names,
    solution_source,
    stub_split,
)

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "teachers" / "answers.md"
BEGIN, END = "<!-- coded-answers: written by scripts/write_answers.py -->", "<!-- end of coded answers -->"
HEADING = re.compile(r"^###\s+(Exercise\s+\d+\s*·.*)$", re.M)


def coded_answers(notebooks=None) -> list[dict]:
    """[{notebook, exercise, checker, forbids, code}] for every coded exercise, in course order."""
    found = []
    for path in notebooks or exercise_notebooks():
        nb = nbformat.read(path, as_version=4)
        solutions = ROOT / "solutions" / f"nb{path.stem.split('_')[0]}.py"
        for answer, _, checker in exercises(nb):
            if answer is None:  # a worked example, not an exercise
                continue
            heading = next((m[-1] for k in range(answer, -1, -1) if nb.cells[k].cell_type == "markdown"
                            for m in [HEADING.findall(nb.cells[k].source)] if m), checker)
            data, _, names = stub_split(nb.cells[answer].source)
            defined = notebook_names(nb.cells[:answer]) | notebook_names([nbformat.v4.new_code_cell(data)])
            found.append({"notebook": nb.cells[0].source.splitlines()[0].lstrip("# ").strip(),
                          "exercise": heading, "checker": checker,
                          "forbids": nb.cells[answer].metadata.get("attention_math", {}).get("forbids", []),
                          "code": solution_source(solutions, names, defined)})
    return found


def section(answers: list[dict]) -> str:
    lines, notebook = [BEGIN, ""], None
    for a in answers:
        if a["notebook"] != notebook:
            notebook = a["notebook"]
            lines += [f"### {notebook} · exercises", ""]
        forbids = ", ".join(f"`ah.{name}`" for name in a["forbids"])
        lines += [f"**{a['exercise']}** (checked by `ah.checks.{a['checker']}`"
                  + (f"; without {forbids}" if forbids else "") + ")", "",
                  "```python", a["code"], "```", ""]
    return "\n".join(lines + [END])


def written(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + section(coded_answers()) + text[end:]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = ANSWERS.read_text(encoding="utf-8")
    new = written(text)
    if "--check" in argv:
        if new != text:
            print(f"teachers/{ANSWERS.name} is not up to date: python -m scripts.write_answers")
            return 1
        return 0
    ANSWERS.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

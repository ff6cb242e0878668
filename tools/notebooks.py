"""Find the course's notebooks, run them, read their outputs: shared by the tests and benchmarks."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
# The numbered notebooks in course order: 00 … 05, 05b, 06 … (sorted by name).
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
IGNORED = {"nbval-ignore-output", "nbval-skip"}

# The same substitutions nbval applies (tests/sanitize.cfg), as (regex, replacement).
_SANITIZE = re.findall(r"^regex: (.*)\nreplace: (.*)$",
                       (ROOT / "tests" / "sanitize.cfg").read_text(), re.M)


def ids(paths):
    return [p.stem for p in paths]


def read(path: Path):
    return nbformat.read(path, as_version=4)


def tags(cell) -> set:
    return set(cell.get("metadata", {}).get("tags", []))


def compared(cell) -> bool:
    """True for a code cell whose output nbval compares."""
    return cell.cell_type == "code" and not (tags(cell) & IGNORED)


def sanitize(text: str) -> str:
    for regex, replacement in _SANITIZE:
        text = re.sub(regex, replacement, text)
    return text


def text_outputs(cell) -> list[str]:
    """The outputs of a cell as nbval sees them: text only, sanitized."""
    texts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            # the kernel may send one print in pieces: join neighbouring pieces, as nbval does
            if texts and isinstance(texts[-1], tuple) and texts[-1][0] == out.name:
                texts[-1] = (out.name, texts[-1][1] + out.text)
            else:
                texts.append((out.name, out.text))
        elif out.output_type in ("execute_result", "display_data"):
            data = out.get("data", {})
            for key in ("text/plain", "text/html", "text/markdown"):
                if key in data and "application/vnd.jupyter.widget-view+json" not in data:
                    texts.append(data[key])
        elif out.output_type == "error":
            texts.append(f"{out.ename}: {out.evalue}")
    return [sanitize(t[1] if isinstance(t, tuple) else t) for t in texts]


def client_for(nb, path: Path) -> NotebookClient:
    return NotebookClient(nb, timeout=120, kernel_name="python3", coalesce_streams=True,
                          resources={"metadata": {"path": str(path.parent)}})


def run_cells(client: NotebookClient, nb) -> list:
    """Run every cell of `nb` in the client's kernel; return a copy of the cells with outputs."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            client.execute_cell(cell, index)
    return copy.deepcopy(nb.cells)


def run_code(client: NotebookClient, source: str) -> str:
    """Run extra code in the notebook's kernel and return what it printed."""
    cell = nbformat.v4.new_code_cell(source)
    client.nb.cells.append(cell)
    try:
        client.execute_cell(cell, len(client.nb.cells) - 1)
    finally:
        client.nb.cells.pop()
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def code_sources(path: Path) -> list[str]:
    """The source of every code cell of a notebook, in order."""
    return [c.source for c in read(path).cells if c.cell_type == "code"]


def notebook_value(path: Path, name: str):
    """The value a notebook assigns to `name`, from the one top-level statement that assigns
    it, evaluated with only numpy as `np`: for the hand-typed data of an exercise."""
    import ast

    import numpy as np

    found = []
    for source in code_sources(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics: not exercise data
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                found.append(ast.get_source_segment(source, node))
    assert len(found) == 1, f"{path.name} assigns {name} {len(found)} times; expected once"
    namespace = {"np": np}
    exec(found[0], namespace)
    return namespace[name]


def notebook_values(path: Path, *names):
    """The values of `names`, from the one code cell that assigns them together
    (`a, b = 1, 2`), evaluated with only numpy as `np`: for an exercise's data."""
    import ast

    import numpy as np

    found = []
    for source in code_sources(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and {n.id for t in node.targets for n in ast.walk(t)
                                                 if isinstance(n, ast.Name)} == set(names):
                found.append(ast.get_source_segment(source, node))
    assert len(found) == 1, f"{path.name} assigns {names} together {len(found)} times; expected once"
    namespace = {"np": np}
    exec(found[0], namespace)
    return tuple(namespace[name] for name in names)

"""Re-execute notebooks in place so their stored outputs are fresh.

    python scripts/execute_notebooks.py                 # every notebook
    python scripts/execute_notebooks.py notebooks/04_softmax.ipynb

Run it after changing a helper or a cell, then commit the notebooks: nbval
compares the stored outputs with fresh ones. Compared with a plain
`jupyter nbconvert --execute --inplace`, it also
- joins print output that the kernel happened to send in pieces, so the
  stored file does not change from run to run;
- records no execution timestamps (they change on every run and make
  parallel edits of a notebook conflict in git); and
- keeps only the last line ("ValueError: ...") of a stored traceback: the
  rest holds file paths of the machine that ran it. nbval ignores tracebacks
  and compares the error's name and message.
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", coalesce_streams=True, record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps: they only make merges conflict
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                out.traceback = [f"{out.ename}: {out.evalue}"]
    nbformat.write(nb, path)


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name}", flush=True)
        execute(path.resolve())

"""What one slider move costs the kernel, per panel: the fast path (the default)
against the plain path, `Panel(fast=False)`, in the same run.

    python -m benchmarks.move_cost [--notebooks 00 09] [--moves 40]

Runs each notebook's code in this process (IPython, the Agg backend) twice:
once as it is, once with every ah.Panel built with fast=False. In each run it
moves each panel's first slider back and forth over its range. Before every
move it sleeps 150 ms, as a student pauses between key presses (a CPU that
has been idle runs the next move slower than a tight loop would). Per move it
records the CPU time of this thread for `slider.value = v`: compute, update
the views, the picture (fast: _fastdraw redraws what moved; plain:
matplotlib's full draw with its layout, print_png), the text alternative. Prints p50 and p90 per panel
and the ratio. This is the kernel's share of a move; the browser benchmark
(slider_latency.py) measures the whole trip.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

os.environ["MPLBACKEND"] = "agg"

import nbformat  # noqa: E402
import numpy as np  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

import attention_helpers as ah  # noqa: E402
from tools.notebooks import NOTEBOOKS  # noqa: E402


def run_notebook(shell, path: Path) -> list:
    """Run the notebook's code cells in `shell`; its panels, each once."""
    nb = nbformat.read(path, as_version=4)
    os.chdir(path.parent)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for cell in nb.cells:
            if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", []):
                shell.run_cell(cell.source, silent=True)
    panels, seen = [], set()
    for name, value in list(shell.user_ns.items()):
        if isinstance(value, ah.Panel) and id(value) not in seen and not name.startswith("_"):
            seen.add(id(value))
            panels.append((name, value))
    return panels


def values_of(slider) -> list:
    """The slider's values from one end to the other and back (at most 21 steps each way)."""
    if hasattr(slider, "options"):
        there = [o[1] if isinstance(o, tuple) else o for o in slider.options]
    elif hasattr(slider, "base"):  # FloatLogSlider: min and max are exponents
        there = list(slider.base ** np.linspace(slider.min, slider.max, 21))
    else:
        there = list(np.linspace(slider.min, slider.max, 21))
        if isinstance(slider.value, int):
            there = sorted(set(int(round(v)) for v in there))
        else:
            there = [round(float(v), 10) for v in there]
    return there + there[::-1]


def measure(panel, moves: int) -> list:
    """CPU ms of this thread per move of the panel's first slider."""
    slider = next(iter(panel.sliders.values()))
    values = values_of(slider)
    times = []
    for k in range(moves):
        time.sleep(0.15)
        start = time.thread_time()
        slider.value = values[k % len(values)]
        times.append(1000 * (time.thread_time() - start))
    return times


@contextlib.contextmanager
def panels_built(fast: bool):
    """Every ah.Panel the notebook builds gets `fast` unless it names its own."""
    defaults = ah.Panel.__init__.__kwdefaults__
    before = defaults["fast"]
    defaults["fast"] = fast
    try:
        yield
    finally:
        defaults["fast"] = before


def measured(path: Path, fast: bool, moves: int) -> dict:
    """{panel name: CPU ms per move} for one run of the notebook."""
    shell = InteractiveShell.instance()
    try:
        with panels_built(fast):
            return {name: measure(panel, moves) for name, panel in run_notebook(shell, path)}
    finally:
        shell.reset(new_session=False)
        InteractiveShell.clear_instance()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", nargs="*", default=None, metavar="NN")
    parser.add_argument("--moves", type=int, default=30)
    args = parser.parse_args(argv)
    notebooks = NOTEBOOKS
    if args.notebooks:
        notebooks = [p for p in notebooks if p.name.split("_")[0] in args.notebooks]
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.moves} moves per panel, "
          "CPU ms of the kernel's thread per move")
    print("| panel | fast p50 | fast p90 | plain (fast=False) p50 | plain p90 | fast / plain |")
    print("|---|---|---|---|---|---|")

    def p90(values):
        return sorted(values)[int(0.9 * (len(values) - 1))]

    for path in notebooks:
        fast, plain = measured(path, True, args.moves), measured(path, False, args.moves)
        for name in fast:
            f, p = fast[name], plain[name]
            print(f"| {path.stem} `{name}` | {statistics.median(f):.1f} | {p90(f):.1f} "
                  f"| {statistics.median(p):.1f} | {p90(p):.1f} "
                  f"| {statistics.median(f) / statistics.median(p):.2f} |", flush=True)
    print("\nproduced by: python -m benchmarks.move_cost --moves", args.moves,
          *(["--notebooks", *args.notebooks] if args.notebooks else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What one slider move costs the kernel, per panel: the panel's own redraw
against a plain full redraw of the same figure, in the same run.

    python -m benchmarks.move_cost [--notebooks 00 09] [--moves 40]

Runs each notebook's code in this process (IPython, the Agg backend), finds
every ah.Panel it made, and moves each panel's first slider back and forth
over its range. Before every move it sleeps 150 ms, as a student pauses
between key presses (a CPU that has been idle runs the next move slower than
a tight loop would). Per move it records the CPU time of this thread for:

  panel      slider.value = v: compute, update the views, _fastdraw.png, the
             text alternative (everything the kernel does for a move);
  full draw  the same views updated, then the whole figure drawn by
             matplotlib and saved as PNG by Pillow (no blitting, no lookup
             tables, no pasted numbers, Pillow's own PNG encoder).

Both include computing the panel's results. Prints p50 and p90 per panel
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


def full_draw(panel) -> bytes:
    """The same move drawn the plain way: update the views, draw the whole figure, PNG by Pillow."""
    for artist, result in zip(panel.artists, panel.outputs()):
        if artist is not None:
            artist.update(result)
    buffer = io.BytesIO()
    panel.figure.canvas.print_png(buffer)
    return buffer.getvalue()


def measure(panel, moves: int) -> tuple[list, list]:
    """CPU ms per move: the panel's own moves first, then the plain full draws (a full
    draw makes the panel draw its saved background afresh on its next move)."""
    slider = next(iter(panel.sliders.values()))
    values = values_of(slider)
    fast, full = [], []
    for k in range(moves):
        time.sleep(0.15)
        start = time.thread_time()
        slider.value = values[k % len(values)]
        fast.append(1000 * (time.thread_time() - start))
    for k in range(moves):
        panel._holding = True  # move the slider without the panel's redraw: full_draw draws instead
        try:
            slider.value = values[k % len(values)]
        finally:
            panel._holding = False
        time.sleep(0.15)
        start = time.thread_time()
        full_draw(panel)
        full.append(1000 * (time.thread_time() - start))
    panel.redraw()  # the panel's own picture again
    return fast, full


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
    print("| panel | panel p50 | panel p90 | full draw p50 | full draw p90 | panel / full draw |")
    print("|---|---|---|---|---|---|")
    for path in notebooks:
        shell = InteractiveShell.instance()
        for name, panel in run_notebook(shell, path):
            fast, full = measure(panel, args.moves)
            p90 = lambda v: sorted(v)[int(0.9 * (len(v) - 1))]  # noqa: E731
            print(f"| {path.stem} `{name}` | {statistics.median(fast):.1f} | {p90(fast):.1f} "
                  f"| {statistics.median(full):.1f} | {p90(full):.1f} "
                  f"| {statistics.median(fast) / statistics.median(full):.2f} |", flush=True)
        shell.reset(new_session=False)
        InteractiveShell.clear_instance()
    print("\nproduced by: python -m benchmarks.move_cost --moves", args.moves,
          *(["--notebooks", *args.notebooks] if args.notebooks else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much memory each notebook's kernel takes, and a student's JupyterLab server.

    python -m benchmarks.kernel_memory            # kernels, and JupyterLab if Chromium is there
    python -m benchmarks.kernel_memory --no-lab   # kernels only

1. Every notebook in notebooks/ runs in its own kernel (Run All, then every
   slider of every panel to both ends, as a class does); the kernel's peak
   resident memory (VmHWM) is printed, after Run All and after the
   sliders. The robustness run (tests/robustness.py) reads the same peak
   (tools/memory.py) and keeps each kernel under KERNEL_BUDGET_MIB after Run All.
2. With Chromium: one JupyterLab server, one browser tab that opens every
   notebook in turn and runs it, as a student does through the course. The
   server's peak resident memory and each kernel's are read from /proc
   (Linux). A hub's single-user server takes more (about 149 MiB against this
   one's 97: JupyterHub's and nbgrader's server extensions).
A student's guarantee and limit on a hub come from a whole class day, not from
these figures: benchmarks/class_day.py.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
from pathlib import Path

from tools.jupyterlab_driver import JupyterLab, chromium, descendants, find_chromium, open_notebook, run_all
from tools.memory import (
    KERNEL_BUDGET_MIB,
    NOTEBOOKS,
    ROOT,
    kernel_peaks_mib,
)


def lab_peaks_mib(notebooks: list[Path]) -> tuple[float, dict[str, float]]:
    """Peak memory (MiB) of one JupyterLab server whose user opens and runs every notebook
    in turn, and of each notebook's kernel."""
    def hwm(pid):  # peak resident set of a live process, from /proc (Linux)
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no VmHWM for process {pid}")

    kernels = {}
    with tempfile.TemporaryDirectory(prefix="memory-") as folder:
        shutil.copytree(ROOT / "notebooks", Path(folder) / "notebooks")
        with JupyterLab(folder) as lab, chromium() as browser:
            page = browser.new_page()
            for path in notebooks:
                before = set(descendants(lab.proc.pid))
                open_notebook(page, lab, f"notebooks/{path.name}")
                run_all(page)
                new = [p for p in descendants(lab.proc.pid) if p not in before]
                kernels[path.stem] = max(hwm(p) for p in new)
                lab.shutdown_kernels()
            server = hwm(lab.proc.pid)
    return server, kernels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-lab", action="store_true", help="skip the JupyterLab + Chromium part")
    args = parser.parse_args(argv)

    print("kernel peak memory (MiB):                 Run All   + every slider to both ends")
    for path in NOTEBOOKS:
        run_all, with_sliders = kernel_peaks_mib(path)
        print(f"  {path.stem:40s} {run_all:6.1f}   {with_sliders:6.1f}")
    print(f"  (budget per kernel, tested: {KERNEL_BUDGET_MIB} MiB; this process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")
    if args.no_lab:
        return 0
    if find_chromium() is None:
        print("no Chromium: skipping the JupyterLab part (apt-get install chromium, or --no-lab)")
        return 0
    server, kernels = lab_peaks_mib(NOTEBOOKS)
    print("\nin JupyterLab, one student opening and running every notebook in turn (MiB):")
    for name, mib in kernels.items():
        print(f"  kernel {name:33s} {mib:6.1f}")
    print(f"  JupyterLab server, peak            {server:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

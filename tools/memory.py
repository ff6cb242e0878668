"""A notebook kernel's peak memory, and a class hub's memory sizing: shared by
benchmarks/kernel_memory.py and benchmarks/class_day.py (which measure) and the tests
(which keep the kernels under budget and the hub guide's figures derived from the runs)."""

from __future__ import annotations

import math
from pathlib import Path

from tools.notebooks import ROOT, client_for, read, run_cells, run_code
from tools.sweep import SWEEP

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))  # the cheat sheet too
KERNEL_BUDGET_MIB = 160   # per notebook kernel; tested (matplotlib 3.11 takes ~8 MiB more than 3.10)
NODE_SIZES_GIB = [8, 16, 32, 64]
NODE_RESERVED_GIB = 1     # kubelet, system pods and the hub's own pods on each node

# The kernel's peak resident memory in MiB. On Linux from /proc (VmHWM): ru_maxrss would carry
# over the peak of the process that started the kernel (it survives execve), e.g. a large pytest.
PEAK = r"""
import re as _re, resource as _r, sys as _s
try:
    _peak = int(_re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read())[1]) / 1024
except OSError:  # macOS: ru_maxrss in bytes
    _peak = _r.getrusage(_r.RUSAGE_SELF).ru_maxrss / 1024 / 1024
print(_peak)
"""


def kernel_peaks_mib(path: Path, sliders: bool = True) -> list[float]:
    """Peak resident memory (MiB) of one kernel after it ran `path` (Run All) and, with
    `sliders`, after it then moved every slider of every panel to both ends."""
    nb = read(path)
    client = client_for(nb, path)
    with client.setup_kernel():
        run_cells(client, nb)
        peaks = [float(run_code(client, PEAK).strip())]
        if sliders:
            run_code(client, SWEEP)
            peaks.append(float(run_code(client, PEAK).strip()))
        return peaks


def students_per_node(per_student: int) -> list[tuple[int, int]]:
    """(node GiB, students) when each student's pod is guaranteed `per_student` MiB."""
    return [(gib, math.floor((gib - NODE_RESERVED_GIB) * 1024 / per_student)) for gib in NODE_SIZES_GIB]


def round_up(mib: float, unit: int = 64) -> int:
    """`mib` rounded up to a multiple of `unit` MiB."""
    return unit * math.ceil(mib / unit)


def guarantee_and_limit(peaks: dict[tuple[str, str], float], kernel: float) -> tuple[int, int]:
    """A student's memory guarantee and limit (MiB) from benchmarks/class_day.py's peaks,
    {(plan, "as taught" or "tabs left open"): MiB}, and the largest kernel (MiB) of any notebook: the
    guarantee holds every plan as the plans teach it (the notebook before shut down), the
    limit every plan with every tab left open and one notebook more (homework, the cheat
    sheet), each rounded up to 64 MiB."""
    taught = [mib for (_, how), mib in peaks.items() if how == "as taught"]
    left_open = [mib for (_, how), mib in peaks.items() if how == "tabs left open"]
    if not taught or not left_open:
        raise ValueError(f"peaks needs both ways of leaving notebooks for a plan, got {sorted(peaks)}")
    return round_up(max(taught)), round_up(max(left_open) + kernel)

"""Each notebook's kernel fits a class hub: under KERNEL_BUDGET_MIB after Run All.

The hub guide sizes a JupyterHub from benchmarks/kernel_memory.py (tools/memory.py); this
test keeps the kernels within the budget that sizing assumes. It measures the
kernel's own peak resident memory (VmHWM on Linux), in the locked environment.
"""

import sys

import pytest

from tools import memory as kernel_memory

pytestmark = pytest.mark.compat
NOTEBOOKS = kernel_memory.NOTEBOOKS  # every notebook in notebooks/, later ones included


@pytest.mark.skipif(sys.platform == "win32", reason="the peak comes from /proc or the resource module")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_kernel_stays_under_the_budget_after_run_all(path):
    (peak,) = kernel_memory.kernel_peaks_mib(path, sliders=False)
    assert 30 < peak < kernel_memory.KERNEL_BUDGET_MIB, \
        f"{path.name}: the kernel peaked at {peak:.0f} MiB (budget {kernel_memory.KERNEL_BUDGET_MIB} MiB)"

"""A class day's memory: one student's server walked through each lesson plan.

    python -m benchmarks.class_day [--plans plan_90_minutes plan_half_day]

For each plan in teachers/ (tools.lesson_plans reads which notebooks it opens,
in order), one student on a real JupyterHub (tools.hub's hub: the
SimpleLocalProcessSpawner, jupyterhub-singleuser, a real nbgitpuller link)
opens every notebook of the plan in turn, as a browser does (a session per
notebook, its kernel's WebSocket), runs all of it (the whole notebook, more than
the plan's slots run), tells each panel's browser view it has drawn, and
moves every slider of every panel to both ends (tools.sweep). Twice:

  as taught      the student closes and shuts down the notebook before
                 (File > Close and Shut Down Notebook, as the plans say) once
                 the next one has run: two kernels at most, for a moment;
  tabs left open the student never shuts anything down: every kernel of the
                 plan stays, as JupyterLab keeps a kernel running until its
                 notebook is shut down (and the hub guide's kernel culling
                 never stops the kernel of an open notebook).

The servers run from a student image (tools/student_image.py): an environment
with the helper, JupyterLab, JupyterHub, nbgitpuller and nbgrader (whose server
extensions every student's server loads), as the hub guide's image recipe
installs it, built from the lock on first use.

Memory is what the pod's limit counts, near enough: the resident memory of the
student's server and everything below it (its kernels), summed, sampled every
0.2 s; the peak of that sum, the server's own peak, and each kernel's peak
(VmHWM). Prints the table for benchmarks/README.md (<!-- class-day-table -->);
the hub guide's memory guarantee and limit are derived from it by
tools.memory.guarantee_and_limit (as taught: the guarantee; every tab left open and
room for one notebook more: the limit), and tests/test_hub_guide.py checks that they
are. Needs what benchmarks/class_load.py needs (JupyterHub, nbgitpuller, node
and npm); takes about 5 minutes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from tools import hub as class_hub
from tools import lesson_plans
from tools.class_student import Student
from tools.memory import guarantee_and_limit
from tools.student_image import student_image, versions
from tools.sweep import SWEEP

PLANS = {p.stem: p for p in lesson_plans.PLANS}
SCENARIOS = ("as taught", "tabs left open")


class Tab(Student):
    """One notebook open in the student's JupyterLab: its session and kernel."""

    def _find_panel(self, displayed=None) -> None:
        # A page draws every panel's browser view and says so (browser_view.js sends `rendered`).
        for model_id, state in list(self.models.items()):
            if state.get("_model_name") == "AnyModel":
                self.send("shell", "comm_msg", {"comm_id": model_id, "data": {
                    "method": "custom", "content": {"rendered": True}}})

    def sweep(self) -> None:
        """Every slider of every panel to both ends, in the kernel (tools.sweep)."""
        ask = self.send("shell", "execute_request", {"code": SWEEP, "silent": False, "store_history": False,
                                                     "user_expressions": {}, "allow_stdin": False,
                                                     "stop_on_error": True})
        self.wait(lambda: ask in self.replies and ask in self.idle, self.timeout, "end of the sweep")
        if self.replies[ask]["status"] != "ok":
            raise RuntimeError(f"{self.notebook}: the sweep failed: {self.replies[ask].get('evalue')}")

    def shut_down(self) -> None:
        """What Close and Shut Down Notebook does: the notebook's session and kernel are deleted."""
        user = f"{self.hub.url}/user/{self.name}/"
        headers = {"X-XSRFToken": self.cookie("_xsrf", f"/user/{self.name}/") or ""}
        sessions = self.http.get(f"{user}api/sessions", timeout=60).json()
        for s in sessions:
            if s["kernel"]["id"] == self.kernel:
                gone = self.http.delete(f"{user}api/sessions/{s['id']}", headers=headers, timeout=60)
                gone.raise_for_status()
        self.close()


class Sampler:
    """The peak of the student's server plus everything below it, resident, sampled every 0.2 s."""

    def __init__(self, hub: class_hub.Hub):
        self.hub, self.peak, self.server_peak, self.kernels = hub, 0.0, 0.0, {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self) -> None:
        for pid, what in self.hub.processes().items():
            if what != "server":
                continue
            try:
                server = psutil.Process(pid)
                total = own = server.memory_info().rss
                children = server.children(recursive=True)
            except (psutil.Error, OSError):
                continue  # the server itself stopped
            for child in children:
                try:
                    total += child.memory_info().rss
                    if class_hub.kind(child.cmdline()) == "kernel":
                        status = Path(f"/proc/{child.pid}/status").read_text()
                        peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
                        self.kernels[child.pid] = max(self.kernels.get(child.pid, 0.0), peak)
                except (psutil.Error, OSError):
                    continue  # this kernel shut down between the listing and the reading: the rest count
            self.peak = max(self.peak, total / 2**20)
            self.server_peak = max(self.server_peak, own / 2**20)

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(0.2)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()
        self.sample()


def walk(hub: class_hub.Hub, repo: str, name: str, notebooks: list[str], taught: bool) -> dict:
    """One student through `notebooks`; the peaks (MiB) while they did."""
    first = Tab(hub, name, repo, notebooks[0])
    first.login_and_pull()
    open_tabs: list[Tab] = []
    with Sampler(hub) as sampler:
        for notebook in notebooks:
            tab = Tab(hub, name, repo, notebook)
            tab.http = first.http  # one browser: the same cookies
            tab.open_notebook()
            tab.run_all()
            tab.sweep()
            if taught and open_tabs:
                open_tabs.pop().shut_down()
            open_tabs.append(tab)
            sampler.sample()
        kernels_left = len([p for p, what in hub.processes().items() if what == "kernel"])
    for tab in open_tabs:
        tab.close()
    return {"peak": sampler.peak, "server": sampler.server_peak, "kernels": sorted(sampler.kernels.values()),
            "kernels_left": kernels_left}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", nargs="+", choices=sorted(PLANS), default=sorted(PLANS))
    args = parser.parse_args(argv)
    why = class_hub.missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    servers = student_image()
    rows = []
    with tempfile.TemporaryDirectory(prefix="class-day-") as folder:
        folder = Path(folder)
        repo = class_hub.bare_repository(folder)
        with class_hub.Hub(folder, servers=servers, nice=0) as hub:
            for k, plan in enumerate(args.plans):
                notebooks = [name for name, _ in lesson_plans.plan_rows(PLANS[plan]).values()]
                for j, scenario in enumerate(SCENARIOS):
                    t = time.monotonic()
                    # a student of their own for each walk: a fresh server, as on the day
                    got = walk(hub, repo, f"student{k}{j}", notebooks, scenario == "as taught")
                    rows.append({"plan": plan, "scenario": scenario, "notebooks": len(notebooks), **got})
                    print(f"  {plan}, {scenario}: {len(notebooks)} notebooks, peak {got['peak']:.1f} MiB "
                          f"({time.monotonic() - t:.0f} s)", flush=True)
                    stop_servers(hub)
    print_table(rows)
    return 0


def stop_servers(hub: class_hub.Hub) -> None:
    """Every student's server stopped (and its kernels with it) before the next walk."""
    class_hub.stop_all([pid for pid, what in hub.processes().items() if what in ("server", "kernel")])


def print_table(rows: list[dict]) -> None:
    print(f"\nthe student image: {', '.join(f'{p} {v}' for p, v in versions().items())}")
    print("\n<!-- class-day-table -->")
    print("| plan | how the student leaves notebooks | notebooks | kernels at the end | server, peak (MiB) "
          "| largest kernel, peak (MiB) | server and kernels, peak (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['plan']} | {r['scenario']} | {r['notebooks']} | {r['kernels_left']} | {r['server']:.1f} "
              f"| {max(r['kernels']):.1f} | {r['peak']:.1f} |")
    kernel = max(max(r["kernels"]) for r in rows)
    guarantee, limit = guarantee_and_limit({(r["plan"], r["scenario"]): r["peak"] for r in rows}, kernel)
    print(f"\nguarantee (the largest peak as taught, rounded up to 64 MiB): {guarantee} MiB; limit (the "
          f"largest peak with every tab left open and one kernel more, rounded up to 64 MiB): {limit} MiB\n"
          f"(one kernel more: this run's largest, {kernel:.1f} MiB; the hub guide takes the largest of any "
          f"notebook's, from python -m benchmarks.kernel_memory, where that is larger)")


if __name__ == "__main__":
    sys.exit(main())

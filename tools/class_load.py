"""A class on one hub: N students drag a panel at once, through a real JupyterHub.

The machinery of benchmarks/class_load.py (which only runs main) and of its test,
tests/test_class_load.py: what the class does, its statistics, its table and targets, and the
command line. The hub is tools/hub.py, one student tools/class_student.py.

    .venv/bin/python -m benchmarks.class_load [--students 1 5 10 20 30] [--notebook 05_...]

What runs, all on 127.0.0.1 in a temporary folder (removed at the end):

- JupyterHub (pip: jupyterhub) with configurable-http-proxy (npm; installed
  into ~/.cache/attention-math/chp if it is not on the PATH), the
  SimpleLocalProcessSpawner (one jupyterhub-singleuser server per student, as
  this user, a home folder each) and the DummyAuthenticator. The servers get
  the course's server settings (lab-settings/ on JUPYTER_CONFIG_PATH), as an
  image built from binder/ has them; --no-settings leaves them out.
  The servers (and kernels) run from this environment, or with --student-image
  from the student image (tools/student_image.py: nbgrader's server extensions too).
- A bare git repository cloned from this clone's HEAD, which every student
  pulls with a real nbgitpuller link (/hub/user-redirect/git-pull?repo=...).
  The kernels import the helper from that pulled copy (PYTHONPATH), as in an
  image with the course installed, not from this environment's install.

Each student, in a thread of this process, does what a browser does: opens
the link (the hub's login form, the spawn that follows, the OAuth redirects
to the student's server, then nbgitpuller's progress stream, which its page
reads), opens the notebook (POST api/sessions, as JupyterLab does),
connects to the kernel's WebSocket through the proxy with JupyterLab's
protocol (v1.kernel.websocket.jupyter.org), sends every code cell's
execute_request at once (Run All), and then moves the first slider of the
panel with the most sliders with the messages a slider sends: a comm_msg
{"method": "update", "state": {"value": v}} on the shell channel.

What the simulated page mirrors of ipywidgets' JavaScript model
(packages/base/src/widget.ts, WidgetModel.sync / send_sync_message /
_handle_status, ipywidgets 8.1): a model keeps at most one update in flight.
A key press while one is in flight does not send; it replaces the buffered
state (a later press overwrites an earlier one's value). When the kernel's
iopub status "idle" whose parent is the update in flight comes back, the
model sends the buffered state, if any. So a kernel never has more than one
move of a slider queued, and under load the page itself skips to the latest
value. The widget views' own traffic (the echo_update the kernel sends back,
the layout and style models) is received and ignored, as the page ignores
echoes it did not ask for; once it has the panel, it tells the panel's browser
view it has drawn, as browser_view.js does. Not mirrored: drawing the picture in
the page (students' laptops do that), and JupyterLab's default of sending widget
messages to a kernel subshell (the course's settings switch it off, and so
does this client).

The class, for each N (students are added as N grows, each set up before
the measurement starts):

- at rest: every student presses a key once, then again after 1.0-1.5 s,
  --rest-moves times (more where the class is small, so that every N has at
  least --samples moves, 150 unless told, and as many bursts below, in all); the
  latency of a move is the press to the picture of its value arriving (the
  image widget's update whose parent is that move);
- dragging, all at once (each starts within 0.3 s of the others):
  --bursts times a key repeat of 30-50 ms for 1-2 s (the slider walks its
  range, turning at the ends), then a pause of 1.5-2.5 s. Per burst: the
  pictures that arrived while the key was held, per second, and the time from
  the last press to the picture of the last value (or, if the kernel already
  showed that value, to the idle of its move). A burst whose last value's
  picture does not come within --answer-timeout counts as "stopped answering".
- CPU over the dragging: per process kind (kernels, single-user servers,
  proxy, hub, and this client), in cores (CPU seconds / wall seconds), and
  the kernels' CPU per picture that arrived;
  memory per student: resident memory of its server plus its kernel after
  the drags, and the kernels' peak.

Against the targets (issue #28: 30 students within 1 s at p95; 5 students within
1.5x of one on every figure), each ratio of 5 students to 1 that comes from
samples is printed with the middle 90 % of what it gives when both samples are
drawn again at random (with replacement, 2000 times): whether one run decides.
A p95 of 40 samples is their third largest, and the ratio of two such swung
between 1.2 and 1.7 from run to run at the same load; hence 150 samples, which
take a student alone about 12 minutes (the pauses between bursts are a
student's; --samples 40 for a quicker, rougher run).

--floor drags the panel's PNG floor instead of the panel: the panel's static
pictures, drawn in advance in each student's kernel (a PNG per value of the
slider), swapped in by a slider like the panel's and an image widget (FLOOR).
The kernel draws nothing and sends a ready picture per move: what the hub, the
servers, ipykernel and ipywidgets give by themselves with a picture per move,
against which the browser view's numbers (and the course's own share) show.

Limits: at most 40 students, --answer-timeout per burst, --setup-timeout per
student; every process started (hub, proxy, servers, kernels) is stopped at
the end, also on Ctrl-C or an error.

The client shares the machine's cores with the hub, where a class's browsers
run on laptops. Its work still takes the hub's CPU (it is printed), but its
waiting should not count as the hub's: the hub, and so everything it starts,
runs at a lower priority (nice +HUB_NICE, --hub-nice), so that a page whose
picture has arrived reads it first, as a laptop would, rather than queueing
for a core behind the kernels it measures. The hub's processes keep their
priorities among themselves. --hub-nice 0 runs everything alike.
"""


from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from tools.class_student import Student
from tools.hub import BIN, HUB_NICE, MAX_STUDENTS, Hub, bare_repository, hub_versions, kind, missing
from tools.student_image import student_image
from tools.student_image import versions as image_versions

NOTEBOOK = "05_weighted_sum_and_self_attention.ipynb"
# Bursts, and moves at rest, per class size at least (see per_student and the docstring). A
# nearest-rank p95 of fewer than 20 samples is their largest; of 150 it is the eighth largest.
SAMPLES = 150


# ---- what the class does -----------------------------------------------------------
def rest_moves(student: Student, moves: int, rng: random.Random, timeout: float) -> list[float]:
    out = []
    for _ in range(moves):
        time.sleep(rng.uniform(1.0, 1.5))
        t = student.press()
        value = student.value
        with student.events:  # woken by every message the student's page receives
            answered = student.events.wait_for(lambda v=value: student.last_value_answered(v), timeout)
        if answered:
            out.append(answered - t)
    return out


def drag(student: Student, bursts: int, rng: random.Random, timeout: float, start: float) -> list[dict]:
    """`bursts` times: a key repeat of 30-50 ms for 1-2 s, then a pause of 1.5-2.5 s."""
    out = []
    time.sleep(max(0.0, start + rng.uniform(0, 0.3) - time.monotonic()))
    for _ in range(bursts):
        held, gap = rng.uniform(1.0, 2.0), rng.uniform(0.030, 0.050)
        first = time.monotonic()
        presses = max(2, round(held / gap))
        for k in range(presses):
            time.sleep(max(0.0, first + k * gap - time.monotonic()))
            last = student.press()
        value = student.value
        with student.events:
            answered = student.events.wait_for(lambda v=value: student.last_value_answered(v),
                                               max(0.0, last + timeout - time.monotonic()))
        with student.lock:
            shown = sum(first <= t <= last for t in student.picture_times)
        out.append({"pictures_per_s": shown / (last - first), "last_value_s": answered - last if answered
                    else None, "presses": presses})
        time.sleep(rng.uniform(1.5, 2.5))
    return out


def setup(student: Student, verbose: bool = False) -> None:
    for step in (student.login_and_pull, student.open_notebook, student.run_all):
        t = time.monotonic()
        step()
        if verbose:
            print(f"    {student.name}: {step.__name__} {time.monotonic() - t:.1f} s", flush=True)


def in_threads(function, items, *args) -> list:
    results, errors = [None] * len(items), []

    def run(i, item):
        try:
            results[i] = function(item, *args)
        except BaseException as err:  # noqa: BLE001 (reported below, by student)
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i, item), daemon=True) for i, item in enumerate(items)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def cpu_times(hub: Hub) -> dict[int, tuple[str, float]]:
    out = {}
    for pid, what in hub.processes().items():
        with contextlib.suppress(psutil.Error):
            t = psutil.Process(pid).cpu_times()
            out[pid] = (what, t.user + t.system)
    return out


def memory(hub: Hub) -> tuple[list[float], list[float], list[float]]:
    """MiB per student: resident server + kernel, the server alone; and each kernel's peak (VmHWM)."""
    per_student, servers, peaks = [], [], []
    for pid, what in hub.processes().items():
        if what != "server":
            continue
        with contextlib.suppress(psutil.Error):
            server = psutil.Process(pid)
            total = server.memory_info().rss
            for child in server.children(recursive=True):
                total += child.memory_info().rss
                if kind(child.cmdline()) == "kernel":
                    status = Path(f"/proc/{child.pid}/status").read_text()
                    peaks.append(int(status.split("VmHWM:")[1].split()[0]) / 1024)
            per_student.append(total / 2**20)
            servers.append(server.memory_info().rss / 2**20)
    return per_student, servers, peaks


def per_student(count: int, students: int, samples: int = SAMPLES) -> int:
    """`count` per student, or more, so that a class of any size gives at least `samples` in all
    (one student alone would otherwise give a p95 that is the largest of three)."""
    return max(count, math.ceil(samples / students))


def measure(hub: Hub, students: list[Student], args, seed: int) -> dict:
    rngs = [random.Random(seed * 1000 + i) for i in range(len(students))]
    rest_moves_each, bursts_each = (per_student(n, len(students), args.samples)
                                    for n in (args.rest_moves, args.bursts))
    rest = [None] * len(students)
    threads = []
    for i, s in enumerate(students):
        def run(i=i, s=s):
            rest[i] = rest_moves(s, rest_moves_each, rngs[i], args.answer_timeout)
        threads.append(threading.Thread(target=run, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(1.0)
    before, wall0, self0 = cpu_times(hub), time.monotonic(), sum(os.times()[:2])
    start = time.monotonic() + 0.2
    bursts = [None] * len(students)
    threads = []
    for i, s in enumerate(students):
        def run(i=i, s=s):
            bursts[i] = drag(s, bursts_each, rngs[i], args.answer_timeout, start)
        threads.append(threading.Thread(target=run, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after, wall, client = cpu_times(hub), time.monotonic() - wall0, sum(os.times()[:2]) - self0
    end = wall0 + wall
    with contextlib.ExitStack() as held:
        for s in students:
            held.enter_context(s.lock)
        pictures = sum(wall0 <= t <= end for s in students for t in s.picture_times)
    cores = {"kernel": 0.0, "server": 0.0, "proxy": 0.0, "hub": 0.0}
    for pid, (what, t) in after.items():
        if what in cores:
            cores[what] += (t - before.get(pid, (what, 0.0))[1]) / wall
    cores["client"] = client / wall
    per_picture = 1000 * cores["kernel"] * wall / max(1, pictures)  # ms of kernel CPU per picture
    mem, servers, peaks = memory(hub)
    flat = [b for per in bursts for b in per]
    lasts = [b["last_value_s"] for b in flat if b["last_value_s"] is not None]
    rates = [statistics.mean(b["pictures_per_s"] for b in per) for per in bursts]
    rests = [x for per in rest for x in per]
    return {"students": len(students), "bursts": len(flat), "stopped": len(flat) - len(lasts),
            "rate_p50": statistics.median(rates), "rate_min": min(rates),
            "last_p50": pct(lasts, 50), "last_p95": pct(lasts, 95),
            "last_max": max(lasts, default=float("nan")),
            "rest_p50": pct(rests, 50), "rest_p95": pct(rests, 95),
            "cores": cores, "kernel_ms_per_picture": per_picture,
            "mem_mean": statistics.mean(mem) if mem else float("nan"),
            "mem_max": max(mem, default=float("nan")), "server_max": max(servers, default=float("nan")),
            "kernel_peak": max(peaks, default=float("nan")),
            "last_values_s": sorted(lasts), "rest_moves_s": sorted(rests)}


def pct(values, q) -> float:
    if not values:
        return float("nan")
    values = sorted(values)  # nearest rank
    return values[max(0, math.ceil(q / 100 * len(values)) - 1)]


# ---- the table -------------------------------------------------------------
HEADER = ("| students | pictures/s while dragging, p50 (slowest) | last value's picture p50 / p95 / max (ms) "
          "| stopped answering | one move at rest p50 / p95 (ms) "
          "| CPU cores: kernels / servers / proxy / hub / client "
          "| kernel CPU per picture (ms) "
          "| MiB per student (largest server; kernels' peak) |\n"
          "|---|---|---|---|---|---|---|---|")


# The targets: with 30 students dragging at once, the last value's picture within 0.3 s at p95
# (issue #62; #28 asked 1 s) and no panel that stops answering; with 5, the last value's picture at
# p95 within 1.2x of what one student alone gets (#62), each other figure within 1.5x (#28). The
# figures compared: (what, key, True where more is better). A class's CPU columns grow with it by
# nature; the largest of the samples is reported, not judged (below).
LARGE_CLASS, LARGE_P95_S, SMALL_CLASS, RATIO = 30, 0.3, 5, 1.5
RATIOS = {"last_p95": 1.2}  # a stricter ratio for some figures
COMPARED = [("pictures/s while dragging, p50", "rate_p50", True),
            ("pictures/s of the slowest student", "rate_min", True),
            ("last value's picture p50", "last_p50", False), ("last value's picture p95", "last_p95", False),
            ("one move at rest p50", "rest_p50", False), ("one move at rest p95", "rest_p95", False),
            ("kernel CPU per picture", "kernel_ms_per_picture", False),
            ("MiB per student", "mem_mean", False)]


# Figures that are a percentile of samples a row keeps: (the samples' key, the percentile).
SAMPLED = {"last_p50": ("last_values_s", 50), "last_p95": ("last_values_s", 95),
           "rest_p50": ("rest_moves_s", 50), "rest_p95": ("rest_moves_s", 95)}


def ratio_interval(one: list[float], many: list[float], q: float, draws: int = 2000,
                   seed: int = 0) -> tuple[float, float]:
    """The middle 90 % of pct(many, q) / pct(one, q) over `draws` times drawing both samples
    again at random, with replacement (a bootstrap): how differently one run could have come out."""
    rng = random.Random(seed)
    ratios = sorted(pct(rng.choices(many, k=len(many)), q) / pct(rng.choices(one, k=len(one)), q)
                    for _ in range(draws))
    return ratios[int(0.05 * draws)], ratios[math.ceil(0.95 * draws) - 1]


def targets(rows: list[dict]) -> list[tuple[str, bool, str]]:
    """Each target the rows can decide, as (what, held, the figures that decide it), unrounded.

    The largest last-value time is left out of the comparison: one sample against one, it
    follows whichever burst met a hiccup (a garbage collection, another process), whatever N is."""
    by_size = {r["students"]: r for r in rows}
    out = []
    if LARGE_CLASS in by_size:
        r = by_size[LARGE_CLASS]
        out.append((f"{LARGE_CLASS} students: last value's picture p95 <= {1000 * LARGE_P95_S:.0f} ms",
                    r["last_p95"] <= LARGE_P95_S, f"{1000 * r['last_p95']:.0f} ms"))
        out.append((f"{LARGE_CLASS} students: no panel stops answering", r["stopped"] == 0,
                    f"{r['stopped']} of {r['bursts']} bursts unanswered"))
    if 1 in by_size and SMALL_CLASS in by_size:
        one, small = by_size[1], by_size[SMALL_CLASS]
        for what, key, more_is_better in COMPARED:
            ratio = one[key] / small[key] if more_is_better else small[key] / one[key]
            figures = f"{one[key]:.4g} -> {small[key]:.4g}, {ratio:.2f}x"
            samples, q = SAMPLED.get(key, (None, None))
            if samples in one and samples in small:
                low, high = ratio_interval(one[samples], small[samples], q)
                figures += f"; 90 % of resamplings {low:.2f}-{high:.2f}x"
            limit = RATIOS.get(key, RATIO)
            out.append((f"{SMALL_CLASS} students against 1: {what} within {limit}x", ratio <= limit, figures))
    return out


def table_row(r: dict) -> str:
    c = r["cores"]
    return (f"| {r['students']} | {r['rate_p50']:.1f} ({r['rate_min']:.1f}) | {1000 * r['last_p50']:.0f} / "
            f"{1000 * r['last_p95']:.0f} / {1000 * r['last_max']:.0f} | {r['stopped']} of {r['bursts']} | "
            f"{1000 * r['rest_p50']:.0f} / {1000 * r['rest_p95']:.0f} | "
            f"{c['kernel']:.2f} / {c['server']:.2f} / "
            f"{c['proxy']:.2f} / {c['hub']:.2f} / {c['client']:.2f} | {r['kernel_ms_per_picture']:.0f} | "
            f"{r['mem_mean']:.0f} "
            f"({r['server_max']:.0f}; {r['kernel_peak']:.0f}) |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, nargs="+", default=[1, 5, 10, 20, 30])
    parser.add_argument("--notebook", default=NOTEBOOK)
    at_least = "per student (at least --samples in all)"
    parser.add_argument("--bursts", type=int, default=3, help=at_least)
    parser.add_argument("--rest-moves", type=int, default=5, help=at_least)
    parser.add_argument("--samples", type=int, default=SAMPLES,
                        help="bursts, and moves at rest, at least this many in all for each class size")
    parser.add_argument("--answer-timeout", type=float, default=20.0)
    parser.add_argument("--setup-timeout", type=float, default=600.0)
    parser.add_argument("--no-settings", action="store_true", help="leave out the course's lab-settings/")
    parser.add_argument("--no-throttle", action="store_true",
                        help="send every key press (no ipywidgets throttle), to see what it spares")
    parser.add_argument("--floor", action="store_true",
                        help="drag the panel's PNG floor: its static pictures drawn in advance, one a move "
                             "(what the Jupyter stack alone gives)")
    parser.add_argument("--hub-nice", type=int, default=HUB_NICE,
                        help="run the hub and all it starts this much nicer than the students' pages "
                             "(0: alike)")
    parser.add_argument("--student-image", action="store_true",
                        help="run the students' servers from the student image (tools/student_image.py: "
                             "nbgrader's server extensions too), not from this environment")
    parser.add_argument("--verbose", action="store_true", help="print each student's set-up steps")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    n = args.students
    if sorted(n) != n or not 1 <= n[0] <= n[-1] <= MAX_STUDENTS:
        parser.error(f"--students must rise, from 1 to at most {MAX_STUDENTS}")
    if args.samples < 1:
        parser.error(f"--samples must be at least 1, got {args.samples}")
    if not 0 <= args.hub_nice <= 19:
        parser.error(f"--hub-nice must be from 0 to 19 (how much nicer the hub runs), got {args.hub_nice}")
    reason = missing()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the clean-up below runs
    load = os.getloadavg()
    servers = student_image() if args.student_image else BIN
    versions = {**hub_versions(), **({"student image": image_versions()} if args.student_image else {})}
    print(f"class_load: {args.notebook}{' (the floor)' if args.floor else ''}, students {args.students}, "
          f"{'no throttle, ' if args.no_throttle else ''}settings "
          f"{'off' if args.no_settings else 'on'}, hub at nice +{args.hub_nice}; "
          f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{os.cpu_count()} cores; {json.dumps(versions)}", flush=True)
    rows, students = [], []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="class-load-") as tmp, \
            Hub(Path(tmp), not args.no_settings, nice=args.hub_nice, servers=servers) as hub:
        try:
            repo = bare_repository(Path(tmp))
            for n in args.students:
                new = [Student(hub, f"student{i:02d}", repo, args.notebook, args.setup_timeout,
                               throttle=not args.no_throttle, floor=args.floor)
                       for i in range(len(students), n)]
                students += new
                t = time.monotonic()
                in_threads(setup, new, args.verbose)
                print(f"  {len(new)} student(s) logged in, pulled, ran all in {time.monotonic() - t:.0f} s",
                      flush=True)
                time.sleep(3.0)  # let the set-up's work drain
                rows.append(measure(hub, students, args, seed=n))
                print(table_row(rows[-1]), flush=True)
        except BaseException:
            print("hub's log, last lines:\n" + hub.log_text()[-4000:], file=sys.stderr)
            raise
        finally:
            for s in students:
                s.close()
    print(f"\nload average at start {load[0]:.2f}; {time.monotonic() - t0:.0f} s in all\n")
    print(HEADER)
    for r in rows:
        print(table_row(r))
    held = targets(rows)
    if held:
        print("\nagainst the targets (from the unrounded figures):")
        for what, ok, figures in held:
            print(f"  {what}: {'yes' if ok else 'NO'} ({figures})")
        by_size = {r["students"]: r for r in rows}
        if 1 in by_size and SMALL_CLASS in by_size:
            print(f"  not judged: the largest last-value time, one sample each: "
                  f"{1000 * by_size[1]['last_max']:.1f} -> {1000 * by_size[SMALL_CLASS]['last_max']:.1f} ms")
        print(f"  all targets: {'yes' if all(ok for _, ok, _ in held) else 'NO'}")
    if args.json:
        found = {"load_at_start": load, "versions": versions, "hub_nice": args.hub_nice,
                 "floor": args.floor, "rows": rows,
                 "targets": [{"what": what, "held": ok, "figures": figures} for what, ok, figures in held]}
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
